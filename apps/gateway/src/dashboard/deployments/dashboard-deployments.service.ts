import { Injectable } from '@nestjs/common';
import { DeploymentsService } from '../../deployments/deployments.service.js';
import { DashboardDeploymentsRepository } from './dashboard-deployments.repository.js';

/** Deployments as the dashboard lists them; one deployment is exactly what the API's poll answers. */
@Injectable()
export class DashboardDeploymentsService {
  constructor(
    private readonly deployments: DashboardDeploymentsRepository,
    private readonly tasks: DeploymentsService,
  ) {}

  async list(applicationId: string) {
    const rows = await this.deployments.list(applicationId);
    return {
      deployments: rows.map(({ warnings, hazards, ...row }) => ({ ...row, warningCount: countOf(warnings), hazardCount: countOf(hazards) })),
    };
  }

  get(applicationId: string, deploymentId: string) {
    return this.tasks.poll(applicationId, deploymentId);
  }

  async releases(applicationId: string) {
    return { releases: await this.deployments.releases(applicationId) };
  }
}

function countOf(entries: unknown): number {
  return Array.isArray(entries) ? entries.length : 0;
}
