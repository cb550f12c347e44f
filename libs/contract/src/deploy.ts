/** The seven steps of every deployment, in order (`deployments.steps`). */
export const DEPLOY_STEPS = ['receive', 'analyze', 'install', 'build', 'scan', 'package', 'release'] as const;
export type DeployStepName = (typeof DEPLOY_STEPS)[number];
export type DeployStepStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped';

export interface DeployStep {
  name: DeployStepName;
  status: DeployStepStatus;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  /** The last part of the step's output, every secret value redacted. */
  log: string;
}

/** `error.code` of a failed deployment (`{code, message, step}`), with what it means. */
export const DEPLOY_FAILURE_CODES = {
  bad_source: 'The stored source is missing or breaks the source format (a path outside the project, a link, a device).',
  unsupported_project: 'The project is neither a static site nor a Node.js project Slipway can build.',
  invalid_package_json: 'package.json is not valid JSON.',
  invalid_slipway_json:
    'slipway.json (build overrides) is not valid: not JSON, an unknown field, a non-string value or an output directory outside the project.',
  ambiguous_project:
    'The upload is a monorepo (npm, pnpm, Yarn or Bun workspaces) with more than one deployable application and none was chosen; the message lists them and the line to add (`"rootDirectory": "apps/web"` in slipway.json, or the deploy\'s `rootDirectory` field).',
  root_directory_invalid:
    "The chosen `rootDirectory` (the deploy's field or slipway.json's) is not a relative directory of the upload holding a package.json or index.html; the message lists the candidates.",
  no_start_script: 'A Node.js server with no "start" script and no entry file to run.',
  node_version_unsupported:
    'The Node.js version the project declares (`engines.node`, `.nvmrc`, `.node-version`) is not one this platform offers; the message says what was declared and which majors are supported.',
  node_unavailable:
    'The Node.js version the project needs could not be fetched or verified (registry unreachable, integrity mismatch); nothing of the project ran. Retrying may help.',
  package_manager_unavailable:
    'The package manager the project uses (its lockfile, or `packageManager` with corepack semantics: exact version and hash) could not be fetched, is not published, or did not match its declared hash; nothing of the project ran.',
  install_failed: 'Installing dependencies failed; the step log shows why.',
  build_failed: 'The build script failed; the step log shows why.',
  build_timeout:
    "Install or build ran past the time limit and was stopped: one command past `BUILD_TIMEOUT_MS`, or the deploy's commands together past `BUILD_TOTAL_TIMEOUT_MS`.",
  output_too_large: 'Install or build printed more output than the limit and was stopped.',
  output_missing: 'The build finished but its output directory does not exist.',
  unsafe_output: 'The build output is, or contains, a link that resolves outside the project; nothing of it was packed.',
  sandbox_unavailable:
    'The sandbox that contains builds and running apps could not be made on this machine; nothing of the project ran. The message says what is missing and how to fix it.',
  storage_quota_exceeded:
    "The packed release would take the owner's stored bytes (sources in progress and kept releases' artifacts) over its plan's storage quota; nothing of it was kept. The message names usage and quota.",
  release_unhealthy: 'The new release did not become healthy; the previous release keeps serving.',
  release_failed: 'The release could not be handed to the runtime.',
  deadline_exceeded:
    'The deployment did not finish before its deadline, counted from when its build started (`DEPLOY_TIMEOUT_MS`); the running step was stopped.',
  worker_lost: 'The worker running the deployment stopped and retries were used up.',
  internal_error: 'An unexpected error inside Slipway; the deployment can be retried.',
  queue_timeout:
    "The deployment waited in the build queue past its deadline (`DEPLOY_DEADLINE_MINUTES` after it was accepted) without being started; nothing of it ran. Deploy again when the owner's other builds are done.",
  build_disk_exceeded:
    "Install or build wrote more than the build's disk budget (the workspace, the package managers' download cache and the build's temporary files share one fixed-size file system; BUILD_DISK_MB) and was stopped by the kernel; the message says the budget and how much was written.",
  build_memory_exceeded:
    "An install or build command used more memory than a build may (the worker's BUILD_MEMORY_MB, no swap) and the kernel stopped it; the message and the step log say how much it used. Make the build use less (e.g. `NODE_OPTIONS=--max-old-space-size=…`), or ask the operator for a higher limit.",
  build_too_many_processes:
    "An install or build command tried to run more processes and threads at once than a build may (the worker's BUILD_PIDS) and then failed; the step log says how many it ran. Reported whenever a command that ran into the limit exits unsuccessfully.",
} as const;
export type DeployFailureCode = keyof typeof DEPLOY_FAILURE_CODES;

export interface DeployError {
  code: DeployFailureCode;
  message: string;
  step: DeployStepName | null;
}

/** A fresh step list, as the gateway writes it when it accepts a deploy. */
export function pendingSteps(): DeployStep[] {
  return DEPLOY_STEPS.map((name) => ({ name, status: 'pending', startedAt: null, finishedAt: null, durationMs: null, log: '' }));
}

export type DeploymentStatus = 'queued' | 'building' | 'releasing' | 'succeeded' | 'failed';

/** A warning or hazard as clients receive it: `code` and `message` always (+ `severity` on hazards). */
export interface DeployFinding {
  code: string;
  message: string;
  severity?: string;
  path?: string;
  detail?: string;
  [extra: string]: unknown;
}

/**
 * `GET /api/v1/deployments/{taskId}` as clients (CLI, dashboard) read it. Names and codes are plain
 * strings here so an older client keeps working when a step or code is added.
 */
export interface DeploymentTask<F extends DeployFinding = DeployFinding> {
  taskId: string;
  status: DeploymentStatus;
  steps: (Omit<DeployStep, 'name'> & { name: string })[];
  spec: Record<string, unknown> | null;
  warnings: F[];
  hazards: F[];
  url?: string;
  error?: { code: string; message: string; step: string | null };
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** Seconds spent in the build queue: from acceptance to the build's start (so far, while still queued). */
  queuedSeconds?: number;
}
