import { join, resolve } from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { AnalyzeError, unsandboxedBuildHazard } from '@slipway/analyzer';
import type { BlobStore } from '@slipway/blob';
import { LIMITS, type DeployError, type DeployFailureCode } from '@slipway/contract';
import { DeploymentsRepository, asApplicationId, asDeploymentId } from '@slipway/platform-data';
import { routesChannel } from '@slipway/queue';
import { nodeToolchainsFor, packageManagersFor, type RoutesMessage } from '@slipway/runtime';
import type { Redis } from 'ioredis';
import { WORKER_CONFIG, type WorkerConfig } from '../config.js';
import { BuildCaches } from '../pipeline/build-caches.js';
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
import { RuntimeHandoff } from './runtime-handoff.js';
import { SignInOrigins } from './sign-in-origins.js';
import { BLOBS, PUBLISHER, SANDBOX, buildDirOf } from './tokens.js';

/** Attempts (first run + stall retries) before a deployment is failed with `worker_lost`. */
export const MAX_ATTEMPTS = 3;

export interface DeployCommand {
  deploymentId: string;
  applicationId: string;
}

export type DeployOutcome = 'succeeded' | 'failed' | 'not-mine' | 'handed-back';

/**
 * One attempt at a deployment: claimed, the seven steps of `pipeline/steps/` run in order (each
 * recorded with its status, timing and log; every write fenced by the attempt number), then the
 * release committed as live. A failure becomes the deployment's error; a shutdown hands it back.
 */
@Injectable()
export class DeployPipelineService {
  private readonly logger = new Logger('deploy');
  private readonly services: PipelineServices;
  /** Finished workspaces, removed in the background (the next deployment does not wait for it). */
  private readonly trash: WorkspaceTrash;

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
      }),
      buildCaches: new BuildCaches(join(buildDirOf(config), 'build-caches')),
      toolchains: nodeToolchainsFor(config, LIMITS.node.supportedMajors, config.NODE_DEFAULT_MAJOR),
      managers: packageManagersFor(config),
      handoff: new RuntimeHandoff(config.EDGE_INTERNAL_URL, config.SLIPWAY_MASTER_KEY, config.RELEASE_TIMEOUT_MS),
      signInOrigins,
      storage: new StorageLifecycle(deployments, blobs, { releasesKept: config.RELEASES_KEPT, quotas: config.STORAGE_QUOTAS }, new Logger('storage')),
    };
  }

  async run(command: DeployCommand, shutdown: AbortSignal): Promise<DeployOutcome> {
    const applicationId = asApplicationId(command.applicationId);
    const deploymentId = asDeploymentId(command.deploymentId);
    const claim = await this.deployments.claim(applicationId, deploymentId);
    if (!claim) return 'not-mine';
    const { attempt } = claim;
    const recorder = new StepRecorder((steps) => this.deployments.save(applicationId, deploymentId, attempt, steps));
    const root = resolve(buildDirOf(this.config), 'workspaces', `${deploymentId}-${attempt}`);
    const context = new DeployContext({ applicationId, deploymentId, attempt, sourceKey: claim.sourceKey }, root, join(root, 'src'), recorder, shutdown, this.services);
    const fail = async (code: DeployFailureCode, message: string) => {
      recorder.skipRemaining();
      const error: DeployError = { code, message: recorder.redact(message), step: context.currentStep };
      await this.deployments.fail(applicationId, deploymentId, attempt, recorder.steps, error, { spec: context.spec, warnings: context.warnings, hazards: context.hazards });
      this.logger.log(`deployment ${deploymentId} failed at ${context.currentStep ?? 'start'}: ${code}`);
      // Ended: its source and whatever it packed go (only once the row is final: see StorageLifecycle).
      await this.services.storage.afterFailure(applicationId, deploymentId, context.release?.artifactKey);
      return 'failed' as const;
    };
    if (attempt > MAX_ATTEMPTS) return fail('worker_lost', `the worker running this deployment stopped ${attempt - 1} times; giving up`);
    // BUILD_SANDBOX=off is a statement about this platform: every deploy says so, whatever it runs.
    const unsandboxed = this.sandboxes.unsandboxedReason;
    if (unsandboxed) context.hazards.push(unsandboxedBuildHazard(unsandboxed));

    // While it runs, finished workspaces are not removed (the disk is this deployment's).
    const releaseTrash = this.trash.hold();
    try {
      context.app = await this.secrets.load(applicationId);
      recorder.useRedactor(new Redactor(context.app.redactable));
      await recorder.persist();
      for (const step of PIPELINE) {
        if (step.enters) await context.save({ status: step.enters });
        context.currentStep = step.name;
        await recorder.run(step.name, (log) => step.run(context, log));
      }
      const releaseId = context.release!.id;
      const message: RoutesMessage = { applicationId };
      const live = await this.deployments.releases.commitLive(applicationId, deploymentId, attempt, releaseId, recorder.steps);
      // Committed or not, the edges follow the database again (a lost attempt: back to the previous release).
      await this.publisher.publish(routesChannel(this.config.QUEUE_PREFIX), JSON.stringify(message));
      if (!live) throw new LostLeaseError('lost');
      this.logger.log(`deployment ${deploymentId} succeeded: release ${releaseId}`);
      await this.services.storage.afterSuccess(applicationId, deploymentId);
      return 'succeeded';
    } catch (error) {
      if (error instanceof LostLeaseError) {
        this.logger.warn(`deployment ${deploymentId} attempt ${attempt}: another attempt owns it now; stopping`);
        return 'not-mine';
      }
      if (shutdown.aborted) {
        const fresh = new StepRecorder(async () => true).steps;
        await this.deployments.handBack(applicationId, deploymentId, attempt, fresh);
        this.logger.warn(`deployment ${deploymentId}: handed back on shutdown`);
        return 'handed-back';
      }
      if (error instanceof StepFailure || error instanceof AnalyzeError) return fail(error.code, error.message);
      this.logger.error(`deployment ${deploymentId}: ${(error as Error).stack ?? String(error)}`);
      return fail('internal_error', `unexpected error in ${context.currentStep ?? 'the worker'}: ${(error as Error).message}`);
    } finally {
      await this.trash.dispose(root).catch(() => undefined);
      releaseTrash();
    }
  }
}
