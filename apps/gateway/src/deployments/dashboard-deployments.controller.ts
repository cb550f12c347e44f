import { Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { CurrentApplication } from '../dashboard/common/current-owner.decorator.js';
import { OwnedApplicationRoute } from '../dashboard/common/owner-guards.js';
import type { OwnedApplication } from '../dashboard/common/owner-principal.js';
import { DeploymentsService } from './deployments.service.js';

@Controller('dashboard/api/applications/:appId')
@OwnedApplicationRoute()
export class DashboardDeploymentsController {
  constructor(private readonly deployments: DeploymentsService) {}

  @Get('deployments')
  list(@CurrentApplication() app: OwnedApplication) {
    return this.deployments.list(app.id);
  }

  @Get('deployments/:deploymentId')
  get(@CurrentApplication() app: OwnedApplication, @Param('deploymentId') deploymentId: string) {
    return this.deployments.poll(app.id, deploymentId);
  }

  @Get('releases')
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

  /** Rollback: make an earlier release live again (no rebuild). */
  @Post('releases/:releaseId/live')
  @HttpCode(200)
  makeLive(@CurrentApplication() app: OwnedApplication, @Param('releaseId') releaseId: string) {
    return this.deployments.makeLive(app.id, releaseId);
  }
}
