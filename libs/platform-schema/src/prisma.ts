import { PrismaPg } from '@prisma/adapter-pg';
import type pg from 'pg';
import { PrismaClient } from './generated/prisma/client.js';

export interface PrismaOptions {
  /** Pool size of the underlying pg pool (ignored when `pool` is given). */
  max?: number;
  /**
   * A pg pool of the caller's to run Prisma's queries on, so that raw `pool.query` calls on a hot
   * path and the Prisma client share one set of connections. The caller ends it.
   */
  pool?: pg.Pool;
}

/** Prisma Client over node-postgres (`@prisma/adapter-pg`): no query-engine binary needed. */
export function createPrismaClient(databaseUrl: string, options: PrismaOptions = {}): PrismaClient {
  const adapter = options.pool ? new PrismaPg(options.pool) : new PrismaPg({ connectionString: databaseUrl, max: options.max ?? 10 });
  return new PrismaClient({ adapter });
}

export type { PrismaClient };
