import type { PrismaClient } from '@slipway/db';
import type { Redis } from 'ioredis';
import { routesChannel } from '@slipway/queue';
import type { RoutesMessage } from './handoff.js';

export class ReleaseNotFoundError extends Error {
  override readonly name = 'ReleaseNotFoundError';
}

/**
 * Rollback (or roll forward): makes an existing release of the application live again, without
 * rebuilding. Static releases switch at once on every edge; a Node release is started by the
 * edge next to the current one and takes traffic once healthy.
 */
export async function makeReleaseLive(prisma: PrismaClient, redis: Redis, prefix: string, applicationId: string, releaseId: string): Promise<void> {
  const { count } = await prisma.$executeRaw`
    UPDATE applications SET live_release_id = ${releaseId}::uuid, updated_at = now()
    WHERE id = ${applicationId}::uuid AND EXISTS (SELECT 1 FROM releases WHERE id = ${releaseId}::uuid AND application_id = ${applicationId}::uuid)`.then((n) => ({ count: n }));
  if (count === 0) throw new ReleaseNotFoundError(`application ${applicationId} has no release ${releaseId}`);
  const message: RoutesMessage = { applicationId };
  await redis.publish(routesChannel(prefix), JSON.stringify(message));
}

/** Tell every edge to reload one application's route (e.g. after a domain change) or all. */
export async function publishRoutesChanged(redis: Redis, prefix: string, message: RoutesMessage): Promise<void> {
  await redis.publish(routesChannel(prefix), JSON.stringify(message));
}
