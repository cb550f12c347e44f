import type { ApplicationId, DeploymentsRepository, ReleaseId } from '@slipway/platform-data';
import type { Redis } from 'ioredis';
import { routesChannel, type RoutesMessage } from '@slipway/messaging';

export class ReleaseNotFoundError extends Error {
  override readonly name = 'ReleaseNotFoundError';
}

/**
 * Rollback (or roll forward): makes an existing release of the application live again, without
 * rebuilding. Static releases switch at once on every edge; a Node release is started by the
 * edge next to the current one and takes traffic once healthy.
 */
export async function makeReleaseLive(deployments: DeploymentsRepository, redis: Redis, prefix: string, applicationId: ApplicationId, releaseId: ReleaseId): Promise<void> {
  if (!(await deployments.releases.switchLive(applicationId, releaseId))) throw new ReleaseNotFoundError(`application ${applicationId} has no release ${releaseId}`);
  const channel = routesChannel(prefix);
  await redis.publish(channel.name, channel.encode({ applicationId }));
}

/** Tell every edge to reload one application's route (e.g. after a domain change) or all. */
export async function publishRoutesChanged(redis: Redis, prefix: string, message: RoutesMessage): Promise<void> {
  const channel = routesChannel(prefix);
  await redis.publish(channel.name, channel.encode(message));
}
