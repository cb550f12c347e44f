import { Injectable } from '@nestjs/common';
import type { PrismaClient } from '@slipway/db';
import { PlatformInfrastructure } from '@slipway/platform-data';
import type pg from 'pg';

/**
 * The gateway's one pg pool and the Prisma client over it, as `PlatformDataModule` wired them;
 * kept while repositories move into libs/platform-data (issue 21). The per-request queries of
 * `POST /api/v1/deploy` (key lookup, admission, insert) go to `pool` directly as named prepared
 * statements: a Prisma `$queryRaw` costs ~0.3 ms more CPU per query than the same statement
 * through pg (bench/README.md, deploy-accept).
 */
@Injectable()
export class PrismaService {
  readonly pool: pg.Pool;
  readonly client: PrismaClient;

  constructor(platform: PlatformInfrastructure) {
    this.pool = platform.pool;
    this.client = platform.prisma;
  }
}
