import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { z } from 'zod';
import { parseBody } from '../common/index.js';
import { OwnersApi, Releases, ReleaseSwitch, RollbackRequest } from '../owners-api/index.js';
import { CurrentApplication, type OwnedApplication, OwnedApplicationRoute } from '../owners/index.js';
import { DeploymentsService } from './deployments.service.js';

/** `POST …/rollback`: an empty body or `{"releaseId"}`. */
export const RollbackBody = z.strictObject({ releaseId: z.string().max(64).optional() });

@Controller('dashboard/api/applications/:appId')
@OwnedApplicationRoute()
export class OwnerDeploymentsController {
  constructor(private readonly deployments: DeploymentsService) {}

  @Get('deployments')
  list(@CurrentApplication() app: OwnedApplication) {
    return this.deployments.list(app.id);
  }

  @Get('deployments/:deploymentId')
  get(@CurrentApplication() app: OwnedApplication, @Param('deploymentId') deploymentId: string) {
    return this.deployments.poll(app.id, deploymentId, { previews: true });
  }

  @Get('releases')
  @OwnersApi({ summary: 'The kept releases, newest first: id, deployment, kind, size, whether live. `slipway releases`.', response: Releases })
  releases(@CurrentApplication() app: OwnedApplication) {
    return this.deployments.releases(app.id);
  }

  /** What the application stores (sources, releases) and the owner's storage quota. */
  @Get('storage')
  storage(@CurrentApplication() app: OwnedApplication) {
    return this.deployments.storage(app.id);
  }

  /** Deletes a release that is not live (room under the storage quota); it can no longer be rolled back to. */
  @Delete('releases/:releaseId')
  @HttpCode(200)
  removeRelease(@CurrentApplication() app: OwnedApplication, @Param('releaseId') releaseId: string) {
    return this.deployments.removeRelease(app.id, releaseId);
  }

  /** Promote: make any kept release live (no rebuild; health-gated like a deploy). `slipway promote`. */
  @Post('releases/:releaseId/live')
  @HttpCode(200)
  @OwnersApi({
    summary:
      'Promote: makes a kept release live without rebuilding, health-gated like a deploy (the edge starts it and finds it healthy before it takes traffic). `slipway promote <releaseId>`.',
    response: ReleaseSwitch,
    errors: ['bad_request', 'release_unhealthy', 'unavailable'],
  })
  makeLive(@CurrentApplication() app: OwnedApplication, @Param('releaseId') releaseId: string) {
    return this.deployments.makeLive(app.id, releaseId);
  }

  /** Rollback: `{"releaseId"}`, or by default the previous release, becomes live. `slipway rollback`. */
  @Post('rollback')
  @HttpCode(200)
  @OwnersApi({
    summary:
      'Rollback: the given release, or by default the previous one (newest succeeded release older than the live one), becomes live as in promote. `slipway rollback [releaseId]`.',
    request: RollbackRequest,
    response: ReleaseSwitch,
    errors: ['bad_request', 'release_unhealthy', 'unavailable'],
  })
  rollback(@CurrentApplication() app: OwnedApplication, @Body() body: unknown) {
    const { releaseId } = parseBody(RollbackBody, body ?? {}, 'Send {} (the previous release) or {"releaseId": "<id>"}.');
    return this.deployments.rollback(app.id, releaseId);
  }
}
