import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { PrismaClient } from '@slipway/db';
import type { Redis } from 'ioredis';
import { PRISMA } from './deployment.repository.js';
import { PUBLISHER } from './tokens.js';

/** Closes shared clients after the worker and reconciler have stopped (their hooks run before). */
@Injectable()
export class DisposeClients implements OnApplicationShutdown {
  constructor(
    @Inject(PRISMA) private readonly prisma: PrismaClient,
    @Inject(PUBLISHER) private readonly publisher: Redis,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    this.publisher.disconnect();
    await this.prisma.$disconnect();
  }
}
