/** The pipeline's steps, in order (ARCHITECTURE.md); the build worker fills them in. */
export const STEP_NAMES = ['receive', 'analyze', 'install', 'build', 'scan', 'package', 'release'] as const;

export type StepName = (typeof STEP_NAMES)[number];

export interface DeploymentStep {
  name: StepName;
  status: 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped';
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  log: string;
}

export function initialSteps(): DeploymentStep[] {
  return STEP_NAMES.map((name) => ({ name, status: 'pending', startedAt: null, finishedAt: null, durationMs: null, log: '' }));
}
