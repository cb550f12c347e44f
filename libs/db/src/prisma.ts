import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/prisma/client.js';

export interface PrismaOptions {
  /** Pool size of the underlying pg pool. */
  max?: number;
}

/** Prisma Client over node-postgres (`@prisma/adapter-pg`): no query-engine binary needed. */
export function createPrismaClient(databaseUrl: string, options: PrismaOptions = {}): PrismaClient {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: options.max ?? 10 });
  return new PrismaClient({ adapter });
}

export type { PrismaClient };
