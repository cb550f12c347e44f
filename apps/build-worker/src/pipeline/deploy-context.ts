import type { Logger } from '@nestjs/common';
import type { BuildResourceUse, Hazard, PackageManagerRequest, ProjectSpec, Warning } from '@slipway/analyzer';
import type { BlobStore } from '@slipway/blob';
import type { DeployStepName } from '@slipway/contract';
import type { ApplicationId, DeploymentFindings, DeploymentId, DeploymentsRepository, ReleaseId } from '@slipway/platform-data';
import type { PortFound } from '@slipway/runtime';
import type { ManagerToolchain, NodeToolchain, NodeToolchains, PackageManagers } from '@slipway/toolchains';
import type { WorkerConfig } from '../config.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { chown, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { StorageLifecycle } from '../storage/storage-lifecycle.js';
import type { BuildCaches } from './build-caches.js';
import { CommandBudget } from './command-budget.js';
import type { BuildDisk, BuildDisks } from './build-disk.js';
import { nearLimitWarning, type UsageLedger } from './build-resources.js';
import { plainFindings } from './plain-log-text.js';
import type { DependencyCache } from './dependency-cache.js';
import type { ProjectCommands } from './project-commands.js';
import { LostLeaseError, type StepRecorder } from './step-recorder.js';

/** One line of a step's log (made plain, redacted and kept as the step's tail by the StepRecorder). */
export type StepLog = (line: string) => void;

/**
 * One of the seven steps (`pipeline/steps/`). `run` resolves 'skipped' when the step does not
 * apply, throws `StepFailure` to fail the deployment with its code, and leaves what later steps
 * need on the context.
 */
export interface PipelineStep {
  readonly name: DeployStepName;
  /** The deployment's status from this step on (saved before the step is marked running). */
  readonly enters?: 'releasing';
  run(context: DeployContext, log: StepLog): Promise<void | 'skipped'>;
}

/** A Node release the edge started and found healthy: how it is contained, and the port it was found listening on when it ignores PORT. */
export interface RuntimeStart {
  /** `off` carries the reason, which becomes the deploy's `unsandboxed_runtime` hazard. */
  containment: { status: 'on' } | { status: 'off'; reason: string };
  portFound?: PortFound;
}

/**
 * What the pipeline needs of the hand-off to the edge (deploy/runtime-handoff.ts is it): the first
 * two steps of making a release live (libs/runtime `ReleaseGoLive`). A Node release is started on
 * the edge and healthy (else a `StepFailure`), `beforeSwitch` runs with what the start reported
 * (null: a static release, not started), then the edge is asked to serve it. The commit follows
 * the release step (deploy/deploy-pipeline.service.ts).
 */
export interface ReleaseHandoff {
  prepare(
    applicationId: ApplicationId,
    release: { id: ReleaseId; kind: 'node' | 'static' },
    beforeSwitch: (started: RuntimeStart | null) => Promise<void>,
    log: (line: string) => void,
  ): Promise<void>;
}

/** What the pipeline needs of the sign-in service's trusted origins (deploy/sign-in-origins.ts is it). */
export interface TrustedOrigins {
  refresh(applicationId: string): Promise<string[]>;
}

/** An application's build as its secrets and sign-in service make it (deploy/application-secrets.ts makes it). */
export interface ApplicationBuildContext {
  /** The slug its sign-in service is named by (a preview's parent's). */
  slug: string;
  /** The application whose sign-in service and trusted origins the release uses (a preview's parent). */
  signInApplicationId: ApplicationId;
  environment: 'production' | 'preview';
  secretNames: string[];
  signInEnabled: boolean;
  /** Everything to remove from logs: secret values, the cookie secret, the database password. */
  redactable: { name: string; value: string }[];
  /** Secret values searched for in served files. */
  scanSecrets: { name: string; value: string }[];
  cookieSecret: string | null;
  /** Build-time variables: public-prefixed secrets, plus the sign-in address when sign-in is on. */
  buildVariables: Record<string, string>;
}

/** What the steps use of the worker, the same for every deployment. */
export interface PipelineServices {
  config: WorkerConfig;
  logger: Logger;
  deployments: DeploymentsRepository;
  blobs: BlobStore;
  commands: ProjectCommands;
  cache: DependencyCache;
  buildCaches: BuildCaches;
  disks: BuildDisks;
  toolchains: NodeToolchains;
  managers: PackageManagers;
  handoff: ReleaseHandoff;
  signInOrigins: TrustedOrigins;
  storage: StorageLifecycle;
}

export interface DeployAttempt {
  applicationId: ApplicationId;
  deploymentId: DeploymentId;
  attempt: number;
  sourceKey: string | null;
  /** The deploy's `rootDirectory`, read with the start from this deployment's own row; null: none given. */
  rootDirectory: string | null;
}

/**
 * One attempt at one deployment, as the steps pass it along: where it builds, the application's
 * secrets, and what each step found for the next (spec, toolchains, warnings, hazards, the
 * release). Also what a failure is recorded with.
 */
export class DeployContext implements UsageLedger {
  /** Set once the application is loaded, before the first step. */
  app!: ApplicationBuildContext;
  currentStep: DeployStepName | null = null;
  spec: ProjectSpec | undefined;
  readonly warnings: Warning[] = [];
  readonly hazards: Hazard[] = [];
  toolchain: NodeToolchain | null = null;
  manager: ManagerToolchain | null = null;
  managerRequest: PackageManagerRequest | null = null;
  /** Next.js standalone output found by the build: the release ships `.next/standalone`. */
  standalone = false;
  /** What is served as static files (scan), null when nothing is. */
  servedDir: string | null = null;
  release: { id: ReleaseId; artifactKey: string; kind: 'node' | 'static'; artifactBytes?: number } | undefined;
  /** The time all of this deploy's commands may take together (`BUILD_TOTAL_TIMEOUT_MS`). */
  readonly budget: CommandBudget;
  /** The build's fixed-size disk mounted at `root` (receive); null with BUILD_DISK_MB=0. */
  disk: BuildDisk | null = null;
  private acquired: Sandbox | undefined;

  constructor(
    readonly attempt: DeployAttempt,
    readonly root: string,
    readonly src: string,
    readonly recorder: StepRecorder,
    /** Aborted when the attempt must stop: the worker shuts down, the deadline passed, or the attempt lost the row. */
    readonly shutdown: AbortSignal,
    readonly services: PipelineServices,
  ) {
    this.budget = new CommandBudget(services.config.BUILD_TOTAL_TIMEOUT_MS);
  }

  /** The spec, once analyze found it (every later step runs after it). */
  get project(): ProjectSpec {
    return this.spec!;
  }

  /** Before the first command of the project: the sandbox, or a sandbox_unavailable failure with nothing run. */
  async codeSandbox(): Promise<Sandbox> {
    return (this.acquired ??= await this.services.commands.sandboxFor(this.root));
  }

  /**
   * The package managers' download cache bound at `/cache`: on the build's disk (`<root>/cache`,
   * counted in its budget and gone with it) when there is one; else the application's own
   * directory kept between builds.
   */
  async downloadCacheDir(owner?: { uid: number; gid: number }): Promise<string> {
    if (!this.disk) return this.services.cache.downloadCacheDir(this.attempt.applicationId, owner);
    const dir = join(this.root, 'cache');
    await mkdir(dir, { recursive: true, mode: 0o700 });
    if (owner) await chown(dir, owner.uid, owner.gid);
    return dir;
  }

  /** What a sandboxed command used (spec.buildResources), and a warning when its memory came near the limit. */
  recordUsage(use: BuildResourceUse): void {
    if (this.spec) (this.spec.buildResources ??= []).push(use);
    const warning = nearLimitWarning(use);
    if (warning) this.warnings.push(warning);
  }

  /**
   * The warnings and hazards as they are stored: plain text (see plain-log-text.ts), since they
   * quote the build (`build_output_warnings` detail) and name the tenant's files.
   */
  plainFindings(): { warnings: Warning[]; hazards: Hazard[] } {
    return { warnings: plainFindings(this.warnings), hazards: plainFindings(this.hazards) };
  }

  /** Saves the steps with what was found; stops the attempt once another one owns the deployment. */
  async save(findings: DeploymentFindings & { status?: 'releasing' }): Promise<void> {
    const { applicationId, deploymentId, attempt } = this.attempt;
    const plain = {
      ...findings,
      ...(findings.warnings ? { warnings: plainFindings(findings.warnings) } : {}),
      ...(findings.hazards ? { hazards: plainFindings(findings.hazards) } : {}),
    };
    if (!(await this.services.deployments.save(applicationId, deploymentId, attempt, this.recorder.steps, plain))) throw new LostLeaseError('lost');
  }
}
