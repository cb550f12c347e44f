import { join, resolve } from 'node:path';
import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { AnalyzeError, rlimitOnlyBuildHazard, unboundedBuildDiskHazard, unsandboxedBuildHazard } from '@slipway/analyzer';
import type { BlobStore } from '@slipway/blob';
import { LIMITS, type DeployError, type DeployFailureCode } from '@slipway/contract';
import { DeploymentsRepository, asApplicationId, asDeploymentId } from '@slipway/platform-data';
import { EdgeHandoff, publishRoutesChanged } from '@slipway/messaging';
import { ReleaseGoLive } from '@slipway/runtime';
import { nodeToolchainsFor, packageManagersFor } from '@slipway/toolchains';
import type { Redis } from 'ioredis';
import { WORKER_CONFIG, type WorkerConfig } from '../config.js';
import { BuildCaches } from '../pipeline/build-caches.js';
import { BuildDisks } from '../pipeline/build-disk.js';
import { BuildLogFeed } from '../pipeline/build-log-feed.js';
import { DeployContext, type PipelineServices } from '../pipeline/deploy-context.js';
import { DependencyCache } from '../pipeline/dependency-cache.js';
import { ProjectCommands } from '../pipeline/project-commands.js';
import { Redactor } from '../pipeline/redactor.js';
import { LostLeaseError, StepFailure, StepRecorder } from '../pipeline/step-recorder.js';
import { WorkspaceTrash } from '../pipeline/workspace-trash.js';
import { PIPELINE } from '../pipeline/steps/index.js';
import { StorageLifecycle } from '../storage/storage-lifecycle.js';
import type { SandboxProvider } from '../sandbox/sandbox-provider.js';
import { ApplicationSecrets } from './application-secrets.js';
import { AttemptStop, AttemptStopped } from './attempt-stop.js';
import { RuntimeHandoff } from './runtime-handoff.js';
import { SignInOrigins } from './sign-in-origins.js';
import { BLOBS, PUBLISHER, SANDBOX, buildDirOf } from '../tokens.js';

/** Attempts (first run + stall retries) before a deployment is failed with `worker_lost`. */
export const MAX_ATTEMPTS = 3;
/** How often a running attempt checks that its row is still its own (else its build is killed). */
const ATTEMPT_WATCH_MS = 5_000;

export interface DeployCommand {
  deploymentId: string;
  applicationId: string;
}

/** `not-its-turn`: another owner's deployment starts first (the fair queue); the job waits a little and comes back. */
export type DeployOutcome = 'succeeded' | 'failed' | 'not-mine' | 'handed-back' | 'not-its-turn';

/**
 * One attempt at a deployment: claimed, the seven steps of `pipeline/steps/` run in order (each
 * recorded with its status, timing and log; every write fenced by the attempt number), then the
 * release committed as live. A failure becomes the deployment's error; a shutdown hands it back.
 */
@Injectable()
export class DeployPipelineService implements OnApplicationShutdown {
  private readonly logger = new Logger('deploy');
  private readonly services: PipelineServices;
  /** Finished workspaces, removed in the background (the next deployment does not wait for it). */
  private readonly trash: WorkspaceTrash;
  /** Each build's fixed-size disk (BUILD_DISK_MB). */
  private readonly disks: BuildDisks;
  /** Making a release live: its start and switch in the release step, its commit here. */
  private readonly live: ReleaseGoLive;

  constructor(
    @Inject(WORKER_CONFIG) private readonly config: WorkerConfig,
    private readonly deployments: DeploymentsRepository,
    private readonly secrets: ApplicationSecrets,
    @Inject(BLOBS) blobs: BlobStore,
    @Inject(SANDBOX) private readonly sandboxes: SandboxProvider,
    @Inject(PUBLISHER) private readonly publisher: Redis,
    signInOrigins: SignInOrigins,
  ) {
    this.trash = new WorkspaceTrash(join(buildDirOf(config), 'trash'));
    void this.trash.sweep();
    this.disks = new BuildDisks({
      imagesDir: join(buildDirOf(config), 'disks'),
      workspacesDir: join(buildDirOf(config), 'workspaces'),
      sizeBytes: config.BUILD_DISK_MB * 1024 * 1024,
    });
    // Disks a killed worker left mounted: unmounted and deleted (never those of a live worker sharing BUILD_DIR).
    void this.disks.sweep().then(
      ({ unmounted, removed }) =>
        unmounted.length + removed.length &&
        this.logger.log(`build disks left by stopped workers: ${unmounted.length} unmounted, ${removed.length} images deleted`),
      (error: Error) => this.logger.error(`build disks left by stopped workers could not be swept: ${error.message}`),
    );
    this.live = new ReleaseGoLive(
      new EdgeHandoff({ edgeUrl: config.EDGE_INTERNAL_URL, masterKey: config.SLIPWAY_MASTER_KEY, timeoutMs: config.RELEASE_TIMEOUT_MS }),
      (message) => publishRoutesChanged(publisher, config.QUEUE_PREFIX, message),
    );
    this.services = {
      config,
      logger: this.logger,
      deployments,
      blobs,
      commands: new ProjectCommands(config, sandboxes),
      cache: new DependencyCache({
        root: join(buildDirOf(config), 'cache'),
        downloads: join(buildDirOf(config), 'downloads'),
        masterKey: config.SLIPWAY_MASTER_KEY,
        maxBytes: config.DEPENDENCY_CACHE_MAX_BYTES,
        appMaxBytes: config.DEPENDENCY_CACHE_APP_MAX_BYTES,
      }),
      buildCaches: new BuildCaches(join(buildDirOf(config), 'build-caches'), {
        appMaxBytes: config.BUILD_CACHE_APP_MAX_BYTES,
        maxBytes: config.BUILD_CACHES_MAX_BYTES,
      }),
      disks: this.disks,
      toolchains: nodeToolchainsFor(config, LIMITS.node.supportedMajors, config.NODE_DEFAULT_MAJOR),
      managers: packageManagersFor(config),
      handoff: new RuntimeHandoff(this.live, config.EDGE_INTERNAL_URL),
      signInOrigins,
      storage: new StorageLifecycle(deployments, blobs, { releasesKept: config.RELEASES_KEPT, quotas: config.STORAGE_QUOTAS }, new Logger('storage')),
    };
  }

  /** Finished deployments' disks are unmounted before the worker exits (else the next start sweeps them). */
  async onApplicationShutdown(): Promise<void> {
    await this.disks.drained();
  }

  async run(command: DeployCommand, shutdown: AbortSignal): Promise<DeployOutcome> {
    const applicationId = asApplicationId(command.applicationId);
    const deploymentId = asDeploymentId(command.deploymentId);
    const start = await this.deployments.queue.tryStart(applicationId, deploymentId, {
      order: this.config.DEPLOY_QUEUE_ORDER,
      perOwner: this.config.BUILDS_PER_OWNER,
      deadlineMs: this.config.DEPLOY_TIMEOUT_MS,
    });
    if (start.kind === 'gone') return 'not-mine';
    if (start.kind === 'wait') {
      this.logger.debug(`deployment ${deploymentId} waits for its turn: ${start.reason}`);
      return 'not-its-turn';
    }
    const { attempt } = start;
    this.logger.log(`deployment ${deploymentId} attempt ${attempt} started after ${(start.queuedMs / 1000).toFixed(1)} s in the queue`);
    // The deadline counts from here (the build's start), never from when the deploy was queued.
    const stop = new AttemptStop({
      shutdown,
      deadlineMs: this.config.DEPLOY_TIMEOUT_MS,
      watchEveryMs: ATTEMPT_WATCH_MS,
      stillRunning: () => this.deployments.queue.stillRunning(applicationId, deploymentId, attempt),
    });
    // Install and build output as it is produced, redacted as the step log is, to whoever follows the deploy (Redis, not Postgres).
    const feed: BuildLogFeed = new BuildLogFeed(this.publisher, this.config.QUEUE_PREFIX, deploymentId, attempt, (text: string): string =>
      recorder.plain(text),
    );
    const recorder: StepRecorder = new StepRecorder((steps) => this.deployments.save(applicationId, deploymentId, attempt, steps), feed);
    const root = resolve(buildDirOf(this.config), 'workspaces', `${deploymentId}-${attempt}`);
    const context = new DeployContext(
      { applicationId, deploymentId, attempt, sourceKey: start.sourceKey, rootDirectory: start.rootDirectory },
      root,
      join(root, 'src'),
      recorder,
      stop.signal,
      this.services,
    );
    const fail = async (code: DeployFailureCode, message: string) => {
      recorder.skipRemaining();
      // The message may quote the build (its failure lines, its command): kept plain and redacted, as the log is.
      const error: DeployError = { code, message: recorder.plain(message), step: context.currentStep };
      await this.deployments.fail(applicationId, deploymentId, attempt, recorder.steps, error, { spec: context.spec, ...context.plainFindings() });
      this.logger.log(`deployment ${deploymentId} failed at ${context.currentStep ?? 'start'}: ${code}`);
      // Ended: its source and whatever it packed go (only once the row is final: see StorageLifecycle).
      await this.services.storage.afterFailure(applicationId, deploymentId, context.release?.artifactKey);
      return 'failed' as const;
    };
    if (attempt > MAX_ATTEMPTS) {
      stop.dispose();
      return fail('worker_lost', `the worker running this deployment stopped ${attempt - 1} times; giving up`);
    }
    // BUILD_SANDBOX=off is a statement about this platform: every deploy says so, whatever it runs.
    const unsandboxed = this.sandboxes.unsandboxedReason;
    if (unsandboxed) context.hazards.push(unsandboxedBuildHazard(unsandboxed));
    // So is BUILD_DISK_MB=0.
    if (!this.disks.bounded) context.hazards.push(unboundedBuildDiskHazard('BUILD_DISK_MB=0'));
    // So is BUILD_LIMITS=rlimit (builds not held in cgroups).
    const rlimitOnly = this.sandboxes.rlimitOnlyReason;
    if (rlimitOnly) context.hazards.push(rlimitOnlyBuildHazard(rlimitOnly));

    // While it runs, finished workspaces are not removed (the disk is this deployment's).
    const releaseTrash = this.trash.hold();
    try {
      context.app = await this.secrets.load(applicationId);
      recorder.useRedactor(new Redactor(context.app.redactable));
      await recorder.persist();
      for (const step of PIPELINE) {
        stop.throwIfStopped();
        if (step.enters) await context.save({ status: step.enters });
        context.currentStep = step.name;
        await recorder.run(step.name, (log) => step.run(context, log));
      }
      stop.throwIfStopped();
      const releaseId = context.release!.id;
      // Committed or not, the edges are told and follow the database again (a lost attempt: back to the previous release).
      const live = await this.live.commit(applicationId, () =>
        this.deployments.releases.commitLive(applicationId, deploymentId, attempt, releaseId, recorder.steps),
      );
      if (!live) throw new LostLeaseError('lost');
      this.logger.log(`deployment ${deploymentId} succeeded: release ${releaseId}`);
      await this.services.storage.afterSuccess(applicationId, deploymentId);
      return 'succeeded';
    } catch (error) {
      if (error instanceof LostLeaseError || stop.reason === 'lost') {
        this.logger.warn(`deployment ${deploymentId} attempt ${attempt}: another attempt owns it now; stopping`);
        return 'not-mine';
      }
      if (stop.reason === 'deadline') {
        return fail(
          'deadline_exceeded',
          `the deployment was still running ${duration(this.config.DEPLOY_TIMEOUT_MS)} after its build started (DEPLOY_TIMEOUT_MS); ${context.currentStep ?? 'it'} was stopped`,
        );
      }
      if (shutdown.aborted) {
        const fresh = new StepRecorder(async () => true).steps;
        await this.deployments.handBack(applicationId, deploymentId, attempt, fresh);
        this.logger.warn(`deployment ${deploymentId}: handed back on shutdown`);
        return 'handed-back';
      }
      // Whatever a step failed with (a tar that could not be extracted, a copy into the workspace), a full build disk is why.
      const full = error instanceof StepFailure && error.code === 'build_disk_exceeded' ? null : await context.disk?.full();
      if (full) return fail('build_disk_exceeded', context.disk!.exceededMessage(`the ${context.currentStep ?? 'build'} step`, full));
      if (error instanceof StepFailure || error instanceof AnalyzeError) return fail(error.code, error.message);
      if (error instanceof AttemptStopped) return fail('internal_error', error.message);
      this.logger.error(`deployment ${deploymentId}: ${(error as Error).stack ?? String(error)}`);
      return fail('internal_error', `unexpected error in ${context.currentStep ?? 'the worker'}: ${(error as Error).message}`);
    } finally {
      stop.dispose();
      // A build disk goes in one piece (unmounted, its image deleted), in the background; an unbounded workspace through the trash.
      if (context.disk)
        await this.disks.retire(context.disk, (error) =>
          this.logger.error(`deployment ${deploymentId}: its build disk could not be released (the next worker start sweeps it): ${error.message}`),
        );
      else await this.trash.dispose(root).catch(() => undefined);
      releaseTrash();
    }
  }
}

function duration(ms: number): string {
  return ms >= 120_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
}
