/** `GET /api/v1/deployments/{taskId}` as the gateway answers it (its api-schemas.ts). */
export interface DeploymentTask {
  taskId: string;
  status: 'queued' | 'building' | 'releasing' | 'succeeded' | 'failed';
  steps: DeploymentStep[];
  spec: Record<string, unknown> | null;
  warnings: Finding[];
  hazards: Finding[];
  url?: string;
  error?: { code: string; message: string; step: string | null };
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

export interface DeploymentStep {
  name: string;
  status: 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped';
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  log: string;
}

export interface Finding {
  code: string;
  message: string;
  [extra: string]: unknown;
}

export function isFinished(task: DeploymentTask): boolean {
  return task.status === 'succeeded' || task.status === 'failed';
}

export const taskPath = (taskId: string) => `/api/v1/deployments/${encodeURIComponent(taskId)}`;
