import type { ApplicationId, DeploymentsRepository, ReleaseId } from '@slipway/platform-data';
import type { Redis } from 'ioredis';
import { publishRoutesChanged } from '@slipway/messaging';

export class ReleaseNotFoundError extends Error {
  override readonly name = 'ReleaseNotFoundError';
}

/**
 * Step 3 of making a release live alone (commit, then tell every edge), without the edge's start
 * and switch: for tests and tools that drive the edge through the routes channel only. The
 * platform's deploys, rollbacks and promotes go through `ReleaseGoLive` (release-go-live.ts).
 * Nothing is announced when the application has no such release.
 */
export async function makeReleaseLive(
  deployments: DeploymentsRepository,
  redis: Redis,
  prefix: string,
  applicationId: ApplicationId,
  releaseId: ReleaseId,
): Promise<void> {
  if (!(await deployments.releases.switchLive(applicationId, releaseId)))
    throw new ReleaseNotFoundError(`application ${applicationId} has no release ${releaseId}`);
  await publishRoutesChanged(redis, prefix, { applicationId });
}
