import { Injectable } from '@nestjs/common';
import type { DeploymentRow, ReleaseView, ServerView } from '@slipway/contract';
import { RoutesPublisher } from '../../common/routes.publisher.js';
import { DeploymentsService } from '../../deployments/deployments.service.js';
import { isUuid } from '../common/ids.js';
import { ApiException } from '@slipway/server';
import { DashboardDeploymentsRepository } from './dashboard-deployments.repository.js';

/** Deployments as the dashboard lists them; one deployment is exactly what the API's poll answers. */
@Injectable()
export class DashboardDeploymentsService {
  constructor(
    private readonly deployments: DashboardDeploymentsRepository,
    private readonly tasks: DeploymentsService,
    private readonly routes: RoutesPublisher,
  ) {}

  async list(applicationId: string): Promise<{ deployments: ServerView<DeploymentRow>[] }> {
    const rows = await this.deployments.list(applicationId);
    return {
      deployments: rows.map(({ warnings, hazards, ...row }) => ({ ...row, warningCount: countOf(warnings), hazardCount: countOf(hazards) })),
    };
  }

  get(applicationId: string, deploymentId: string) {
    return this.tasks.poll(applicationId, deploymentId);
  }

  async releases(applicationId: string): Promise<{ releases: ServerView<ReleaseView>[] }> {
    return { releases: await this.deployments.releases(applicationId) };
  }

  async makeLive(applicationId: string, releaseId: string) {
    if (!isUuid(releaseId)) throw new ApiException('not_found', 'This application has no such release.');
    await this.routes.makeLive(applicationId, releaseId);
    return this.releases(applicationId);
  }
}

function countOf(entries: unknown): number {
  return Array.isArray(entries) ? entries.length : 0;
}
