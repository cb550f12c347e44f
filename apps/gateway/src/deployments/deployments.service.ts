import { Inject, Injectable } from '@nestjs/common';
import { ApiException } from '@slipway/server';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';
import { TaskId, type DeploymentTask } from '../contract/api-schemas.js';
import { DeploymentsRepository } from './deployments.repository.js';

@Injectable()
export class DeploymentsService {
  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly deployments: DeploymentsRepository,
  ) {}

  /** The task as its application sees it; another application's task does not exist. */
  async poll(applicationId: string, taskId: string): Promise<DeploymentTask> {
    const id = TaskId.safeParse(taskId.toLowerCase());
    const row = id.success ? await this.deployments.findForApplication(applicationId, id.data) : null;
    if (!row) throw new ApiException('not_found', `No deployment task ${taskId.slice(0, 64)} for this application.`);
    const task: DeploymentTask = {
      taskId: row.id,
      status: row.status,
      steps: row.steps as DeploymentTask['steps'],
      spec: (row.spec ?? null) as DeploymentTask['spec'],
      warnings: row.warnings as DeploymentTask['warnings'],
      hazards: row.hazards as DeploymentTask['hazards'],
      createdAt: row.createdAt.toISOString(),
      startedAt: row.startedAt?.toISOString() ?? null,
      finishedAt: row.finishedAt?.toISOString() ?? null,
    };
    if (row.status === 'succeeded') task.url = `${this.config.APPS_SCHEME}://${row.application.slug}.${this.config.APPS_DOMAIN[0]}`;
    if (row.status === 'failed') task.error = (row.error ?? { code: 'internal', message: 'The deployment failed.', step: null }) as DeploymentTask['error'];
    return task;
  }
}
