import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { createPrismaClient, type PrismaClient } from '@slipway/db';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';

/** The gateway's one Prisma client (one pg pool); repositories receive it. */
@Injectable()
export class PrismaService implements OnModuleDestroy {
  readonly client: PrismaClient;

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    this.client = createPrismaClient(config.DATABASE_URL, { max: 10 });
  }

  async onModuleDestroy(): Promise<void> {
    await this.client.$disconnect();
  }
}
