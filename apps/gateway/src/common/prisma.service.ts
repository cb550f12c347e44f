import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { createPrismaClient, type PrismaClient } from '@slipway/db';
import pg from 'pg';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';

/**
 * The gateway's one pg pool and the Prisma client over it; repositories receive both. The
 * per-request queries of `POST /api/v1/deploy` (key lookup, admission, insert) go to `pool`
 * directly as named prepared statements: a Prisma `$queryRaw` costs ~0.3 ms more CPU per query
 * than the same statement through pg (bench/README.md, deploy-accept).
 */
@Injectable()
export class PrismaService implements OnModuleDestroy {
  readonly pool: pg.Pool;
  readonly client: PrismaClient;

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    this.pool = new pg.Pool({ connectionString: config.DATABASE_URL, max: 10 });
    // An idle connection that dies (server restart) must not crash the process; pg reconnects.
    this.pool.on('error', () => undefined);
    this.client = createPrismaClient(config.DATABASE_URL, { pool: this.pool });
  }

  async onModuleDestroy(): Promise<void> {
    await this.client.$disconnect();
    await this.pool.end().catch(() => undefined);
  }
}
