import type { DeployFinding, DeploymentTask } from '@slipway/contract';

export type { DeploymentTask };
export type DeploymentStep = DeploymentTask['steps'][number];
export type Finding = DeployFinding;

export function isFinished(task: DeploymentTask): boolean {
  return task.status === 'succeeded' || task.status === 'failed';
}

export const taskPath = (taskId: string) => `/api/v1/deployments/${encodeURIComponent(taskId)}`;
