import { mkdir, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { AnalyzeError, analyzeSource, buildFailureLines, packageManagerRequest, parsePackageJson, buildOutputWarnings, outputHazards, readProjectDir, unsandboxedBuildHazard, unsandboxedRuntimeHazard, type Hazard, type PackageManagerRequest, type ProjectSpec, type Warning } from '@slipway/analyzer';
import type { BlobStore } from '@slipway/blob';
import { LIMITS, type DeployError, type DeployFailureCode, type DeployStepName } from '@slipway/contract';
import { MANAGER_BIN, SandboxUnavailableError, TOOLCHAIN_BIN, ToolchainError, nodeToolchainsFor, packageManagersFor, toolchainEnv, routesChannel, type ManagerToolchain, type NodeToolchain, type NodeToolchains, type PackageManagers, type RoutesMessage } from '@slipway/runtime';
import { DeploymentsRepository, asApplicationId, asDeploymentId, asReleaseId } from '@slipway/platform-data';
import type { Redis } from 'ioredis';
import { WORKER_CONFIG, type WorkerConfig } from '../config.js';
import { BuildCaches } from '../pipeline/build-caches.js';
import { DependencyCache } from '../pipeline/dependency-cache.js';
import { managerCacheEnv, managerFor, pruneCommand, readPackageJsonOf } from '../pipeline/manager-commands.js';
import { assembleNextStandalone, hasNextStandalone, nextStandaloneBuildEnv } from '../pipeline/next-standalone.js';
import { Redactor } from '../pipeline/redactor.js';
import { resolveOutputDir } from '../pipeline/output-links.js';
import { packRelease } from '../pipeline/release-packer.js';
import { extractSource } from '../pipeline/source-extractor.js';
import { LostLeaseError, StepFailure, StepRecorder } from '../pipeline/step-recorder.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { SandboxProvider } from '../sandbox/sandbox-provider.js';
import { chownTree } from '../sandbox/run-detached.js';
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

/** The seven steps, run once per attempt with every write fenced by the attempt number. */
@Injectable()
export class DeployPipelineService {
  private readonly logger = new Logger('deploy');
  private readonly cache: DependencyCache;
  private readonly handoff: RuntimeHandoff;
  private readonly toolchains: NodeToolchains;
  private readonly managers: PackageManagers;
  private readonly buildCaches: BuildCaches;

  constructor(
    @Inject(WORKER_CONFIG) private readonly config: WorkerConfig,
    private readonly deployments: DeploymentsRepository,
    private readonly secrets: ApplicationSecrets,
    @Inject(BLOBS) private readonly blobs: BlobStore,
    @Inject(SANDBOX) private readonly sandboxes: SandboxProvider,
    @Inject(PUBLISHER) private readonly publisher: Redis,
    private readonly signInOrigins: SignInOrigins,
  ) {
    this.cache = new DependencyCache({
      root: join(buildDirOf(config), 'cache'),
      downloads: join(buildDirOf(config), 'downloads'),
      masterKey: config.SLIPWAY_MASTER_KEY,
      maxBytes: config.DEPENDENCY_CACHE_MAX_BYTES,
    });
    this.toolchains = nodeToolchainsFor(config, LIMITS.node.supportedMajors, config.NODE_DEFAULT_MAJOR);
    this.managers = packageManagersFor(config);
    this.buildCaches = new BuildCaches(join(buildDirOf(config), 'build-caches'));
    this.handoff = new RuntimeHandoff(config.EDGE_INTERNAL_URL, config.SLIPWAY_MASTER_KEY, config.RELEASE_TIMEOUT_MS);
  }

  async run(command: DeployCommand, shutdown: AbortSignal): Promise<DeployOutcome> {
    const applicationId = asApplicationId(command.applicationId);
    const deploymentId = asDeploymentId(command.deploymentId);
    const claim = await this.deployments.claim(applicationId, deploymentId);
    if (!claim) return 'not-mine';
    const { attempt } = claim;
    const recorder = new StepRecorder((steps) => this.deployments.save(applicationId, deploymentId, attempt, steps));
    const warnings: Warning[] = [];
    const hazards: Hazard[] = [];
    let spec: ProjectSpec | undefined;
    let currentStep: DeployStepName | null = null;
    let toolchain: NodeToolchain | null = null;
    let manager: ManagerToolchain | null = null;
    let managerRequest: PackageManagerRequest | null = null;
    const fail = async (code: DeployFailureCode, message: string) => {
      recorder.skipRemaining();
      const error: DeployError = { code, message: recorder.redact(message), step: currentStep };
      await this.deployments.fail(applicationId, deploymentId, attempt, recorder.steps, error, { spec, warnings, hazards });
      this.logger.log(`deployment ${deploymentId} failed at ${currentStep ?? 'start'}: ${code}`);
      return 'failed' as const;
    };
    if (attempt > MAX_ATTEMPTS) return fail('worker_lost', `the worker running this deployment stopped ${attempt - 1} times; giving up`);
    // BUILD_SANDBOX=off is a statement about this platform: every deploy says so, whatever it runs.
    const unsandboxed = this.sandboxes.unsandboxedReason;
    if (unsandboxed) hazards.push(unsandboxedBuildHazard(unsandboxed));

    const root = resolve(buildDirOf(this.config), 'workspaces', `${deploymentId}-${attempt}`);
    const src = join(root, 'src');
    const step = async (name: DeployStepName, fn: (log: (line: string) => void) => Promise<void | 'skipped'>) => {
      currentStep = name;
      await recorder.run(name, fn);
    };
    try {
      const app = await this.secrets.load(applicationId);
      recorder.useRedactor(new Redactor(app.redactable));
      await recorder.persist();

      await step('receive', async (log) => {
        if (!claim.sourceKey) throw new StepFailure('bad_source', 'the deployment has no stored source');
        await rm(root, { recursive: true, force: true });
        await mkdir(src, { recursive: true });
        const source = await this.blobs.get(claim.sourceKey).catch(() => {
          throw new StepFailure('bad_source', `the stored source ${claim.sourceKey} is missing`);
        });
        const { files, bytes } = await extractSource(source, src);
        log(`extracted ${files} files (${bytes} bytes)`);
      });

      await step('analyze', async (log) => {
        const files = await readProjectDir(src);
        const analysis = analyzeSource(files, { secretNames: app.secretNames, signInEnabled: app.signInEnabled });
        spec = analysis.spec;
        toolchain = await this.nodeFor(spec, log);
        managerRequest = packageManagerRequest(files);
        manager = await managerFor(this.managers, spec, managerRequest, toolchain, log);
        warnings.push(...analysis.warnings);
        hazards.push(...analysis.hazards);
        log(`${spec.kind}${spec.framework ? ` (${spec.framework}${spec.frameworkVersion ? ` ${spec.frameworkVersion}` : ''})` : ''}: install ${spec.commands.install ?? '-'}, build ${spec.commands.build ?? '-'}, start ${spec.commands.start ?? '-'}`);
        for (const reason of spec.reasons) log(`  because ${reason}`);
        if (!(await this.deployments.save(applicationId, deploymentId, attempt, recorder.steps, { spec, warnings, hazards }))) throw new LostLeaseError('lost');
      });
      const project = spec!;
      const node = toolchain;
      const pm = manager as ManagerToolchain | null;
      let acquired: Sandbox | undefined;
      // Before the first command of the project: the sandbox, or a sandbox_unavailable failure with nothing run.
      const codeSandbox = async () => (acquired ??= await this.sandboxFor(root));

      await step('install', async (log) => {
        if (!project.commands.install) return 'skipped';
        const sandbox = await codeSandbox();
        await rm(join(src, 'node_modules'), { recursive: true, force: true });
        const owner = sandbox.mode.kind === 'bwrap' ? { uid: sandbox.mode.uid, gid: sandbox.mode.gid } : undefined;
        // Unsandboxed, the install runs as the worker's own user and could rewrite the cache: none is used.
        const key = project.lockfile && owner && this.cache.enabled
          ? await this.cache.keyFor(applicationId, src, project.lockfile, `${project.packageManager ?? 'npm'}@${project.packageManagerVersion ?? 'bundled'}`, project.nodeVersion ?? process.version).catch((error: Error) => {
            log(`dependencies are not cached: ${project.lockfile} cannot be read (${error.message.replaceAll(src, '.')})`);
            return null;
          })
          : null;
        if (key) {
          const restored = await this.cache.restore(key, src, owner);
          if (restored.hit) {
            log(`dependencies restored from the cache (lockfile ${project.lockfile} unchanged, ${restored.files} files verified in ${restored.ms} ms)`);
            return;
          }
          if (restored.reason) {
            log(restored.discarded ? `the cached dependencies were discarded: ${restored.reason}; installing afresh` : `${restored.reason}; installing`);
            this.logger.warn(`deployment ${deploymentId}: dependency cache of ${applicationId} not used: ${restored.reason}`);
          }
        }
        const downloads = await this.cache.downloadCacheDir(applicationId, owner);
        await this.exec(sandbox, project.commands.install, { root, src, env: this.installEnv(sandbox, downloads, root, node, pm), cacheDir: downloads, toolchain: node, manager: pm, failure: 'install_failed', shutdown, log });
        if (key) {
          const saved = await this.cache.save(key, src);
          log(saved.saved ? `dependencies cached (${saved.files} files, ${saved.bytes} bytes)` : `dependencies not cached: ${saved.reason}`);
        }
      });

      let standalone = false;
      await step('build', async (log) => {
        // After the build, a Node release's dev dependencies go (each manager's own prune).
        const pkg = parsePackageJson(await readPackageJsonOf(src));
        const prune = pruneCommand(project, pkg, managerRequest);
        const standaloneEnv = project.commands.build ? nextStandaloneBuildEnv(project, pkg) : {};
        if (!project.commands.build && !prune.command) return 'skipped';
        const sandbox = await codeSandbox();
        if (project.commands.build) {
          // Kept caches only where the build runs sandboxed (as the build user, whose files they are).
          const keepCaches = sandbox.mode.kind === 'bwrap';
          if (keepCaches) {
            const owner = sandbox.mode.kind === 'bwrap' ? { uid: sandbox.mode.uid, gid: sandbox.mode.gid } : undefined;
            const restored = await this.buildCaches.restore(applicationId, src, owner);
            if (restored.length) log(`build caches restored: ${restored.join(', ')}`);
            // Next.js asks CI builds to "configure build caching" unless .next/cache exists: it is configured (kept per application).
            else if (project.framework === 'next') await this.buildCaches.prepare(src, '.next/cache', owner);
          }
          const output = await this.exec(sandbox, project.commands.build, { root, src, env: { ...this.buildEnv(sandbox, app.buildVariables, root, node, pm), ...standaloneEnv }, toolchain: node, manager: pm, failure: 'build_failed', shutdown, log });
          warnings.push(...buildOutputWarnings(recorder.redact(output)));
          // What the build must produce (a framework's server bundle, e.g. SvelteKit's build/), else what is served.
          const produced = project.buildOutput ?? project.outputDir;
          if (produced && produced !== '.' && !(await this.stat(await resolveOutputDir(src, produced)))?.isDirectory()) {
            throw new StepFailure('output_missing', `the build finished but did not produce ${produced}/`);
          }
          if (keepCaches) {
            const { kept } = await this.buildCaches.keep(applicationId, src);
            if (kept.length) log(`build caches kept for the next build, not shipped: ${kept.join(', ')}`);
          }
        }
        if (standaloneEnv.NEXT_PRIVATE_STANDALONE && (await hasNextStandalone(src))) {
          standalone = true;
          log('Next.js standalone output: the release ships .next/standalone (only the traced dependencies), started with node server.js');
          return;
        }
        if (!prune.command) {
          log(`dev dependencies not pruned: ${prune.why}`);
          return;
        }
        const downloads = await this.cache.downloadCacheDir(applicationId, sandbox.mode.kind === 'bwrap' ? { uid: sandbox.mode.uid, gid: sandbox.mode.gid } : undefined);
        await this.exec(sandbox, prune.command, { root, src, env: { ...this.installEnv(sandbox, downloads, root, node, pm), NODE_ENV: 'production' }, cacheDir: downloads, toolchain: node, manager: pm, failure: 'build_failed', shutdown, log });
      });

      let servedDir: string | null = null;
      await step('scan', async (log) => {
        // Resolved inside the project only: an output that is a link leading out fails here (unsafe_output).
        servedDir = await this.servedDir(project, src);
        // A Node server may serve public/ at / besides its outputDir (Next.js does): scanned too, so no hazard depends on the kind.
        const alsoServed = servedDir && (project.kind === 'node' || project.kind === 'node+static') ? await resolveOutputDir(src, 'public') : null;
        if (!servedDir) {
          log('nothing is served as static files');
          return;
        }
        const served = (await readProjectDir(servedDir)).filter((f) => !f.path.startsWith('node_modules/'));
        if (alsoServed && alsoServed !== servedDir && !alsoServed.startsWith(`${servedDir}/`)) {
          served.push(...(await readProjectDir(alsoServed)).map((f) => ({ ...f, path: `public/${f.path}` })));
        }
        hazards.push(...outputHazards(served, { secrets: app.scanSecrets, cookieSecret: app.cookieSecret }));
        log(`scanned ${served.length} served files`);
        if (!(await this.deployments.save(applicationId, deploymentId, attempt, recorder.steps, { warnings, hazards }))) throw new LostLeaseError('lost');
      });

      const releaseId = asReleaseId(randomUUID());
      const artifactKey = `releases/${releaseId}.tar.gz`;
      const releaseKind = project.kind === 'node' || project.kind === 'node+static' ? 'node' : 'static';
      await step('package', async (log) => {
        let dir = releaseKind === 'node' ? src : servedDir!;
        if (standalone) {
          dir = await assembleNextStandalone(src);
          project.commands.start = 'node server.js';
          project.startSource = 'framework';
          project.reasons.push('Next.js standalone output (.next/standalone with .next/static and public): started with node server.js (reads PORT)');
        }
        const packed = await packRelease(this.blobs, artifactKey, dir, { skipNodeModules: releaseKind === 'static', precompress: releaseKind === 'static', project: src, skipBuildCaches: releaseKind === 'node' });
        project.artifact = { bytes: packed.bytes, files: packed.files };
        if (!(await this.deployments.save(applicationId, deploymentId, attempt, recorder.steps, { spec: project }))) throw new LostLeaseError('lost');
        log(`${artifactKey}: ${packed.files} files (${packed.precompressed} precompressed forms), ${packed.bytes} bytes, sha256 ${packed.sha256}`);
      });

      if (!(await this.deployments.save(applicationId, deploymentId, attempt, recorder.steps, { status: 'releasing' }))) throw new LostLeaseError('lost');
      await step('release', async (log) => {
        // A release carries no pnpm, yarn or bun: its package.json script runs through the npm of its Node.
        const viaNpm = /^(pnpm|yarn|bun) run (\S+)$/.exec(project.commands.start ?? '');
        if (viaNpm) {
          project.commands.start = `npm run ${viaNpm[2]}`;
          project.reasons.push(`the release starts with npm run ${viaNpm[2]} (the ${viaNpm[1]} script, run by the npm of its Node)`);
        }
        if (!(await this.deployments.releases.create(applicationId, deploymentId, attempt, { id: releaseId, kind: releaseKind, artifactKey, spec: project }))) throw new LostLeaseError('lost');
        if (releaseKind === 'node') {
          const containment = await this.handoff.start(releaseId, log);
          if (containment.status === 'off') {
            hazards.push(unsandboxedRuntimeHazard(containment.reason));
            if (!(await this.deployments.save(applicationId, deploymentId, attempt, recorder.steps, { hazards }))) throw new LostLeaseError('lost');
          }
        }
        if (app.signInEnabled) log(`sign-in trusted origins: ${(await this.signInOrigins.refresh(applicationId)).join(', ')}`);
        await this.handoff.switchTo(applicationId, releaseId, log);
        log(`release ${releaseId} is live`);
      });
      const message: RoutesMessage = { applicationId };
      const live = await this.deployments.releases.commitLive(applicationId, deploymentId, attempt, releaseId, recorder.steps);
      // Committed or not, the edges follow the database again (a lost attempt: back to the previous release).
      await this.publisher.publish(routesChannel(this.config.QUEUE_PREFIX), JSON.stringify(message));
      if (!live) throw new LostLeaseError('lost');
      this.logger.log(`deployment ${deploymentId} succeeded: release ${releaseId}`);
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
      return fail('internal_error', `unexpected error in ${currentStep ?? 'the worker'}: ${(error as Error).message}`);
    } finally {
      await rm(root, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  private servedDir(spec: ProjectSpec, src: string): Promise<string | null> {
    if (spec.outputDir) return resolveOutputDir(src, spec.outputDir);
    return spec.kind === 'node' ? resolveOutputDir(src, 'public') : Promise.resolve(null);
  }

  private stat(path: string | null) {
    return path ? stat(path).catch(() => null) : null;
  }

  /** Probes (or reuses) the sandbox and hands the workspace to the build user; fails closed. */
  private async sandboxFor(root: string): Promise<Sandbox> {
    const sandbox = await this.acquireSandbox('nothing of the project ran');
    if (sandbox.mode.kind === 'bwrap') await chownTree(root, sandbox.mode);
    return sandbox;
  }

  private acquireSandbox(ran: string): Promise<Sandbox> {
    return this.sandboxes.acquire().catch((error: unknown) => {
      if (error instanceof SandboxUnavailableError) throw new StepFailure('sandbox_unavailable', `builds cannot be sandboxed on this machine (${ran}): ${error.message}`);
      throw error;
    });
  }

  /**
   * Resolves the project's declared Node.js to an exact version (`spec.nodeVersion`) and makes
   * sure it is on this machine; `node_version_unsupported` / `node_unavailable` otherwise, before
   * anything of the project ran. Null: the platform's own Node (nothing declared, or it fits).
   */
  private async nodeFor(spec: ProjectSpec, log: (line: string) => void): Promise<NodeToolchain | null> {
    const runsNode = Boolean(spec.commands.install || spec.commands.build || spec.commands.start);
    if (!runsNode) return null;
    try {
      const request = spec.nodeVersionRequest ?? null;
      const chosen = await this.toolchains.resolve(request);
      spec.nodeVersion = chosen.version;
      spec.reasons.push(request
        ? `Node.js ${chosen.version}: the newest offered version that fits ${request.source === 'engines' ? 'engines.node' : request.source} "${request.value}"`
        : `Node.js ${chosen.version}: nothing declared (engines.node, .nvmrc, .node-version), so the platform's default, Node ${this.config.NODE_DEFAULT_MAJOR}${this.config.NODE_DEFAULT_MAJOR === LIMITS.node.defaultMajor ? ' (the Active LTS; Node 20 is end-of-life)' : ' (NODE_DEFAULT_MAJOR)'}`);
      const toolchain = await this.toolchains.ensure(chosen.version, log);
      log(`Node.js ${chosen.version}${request ? ` for ${request.source} "${request.value}"` : ` (nothing declared: the default, Node ${this.config.NODE_DEFAULT_MAJOR})`}${toolchain ? `, npm ${toolchain.npmVersion}` : ''}`);
      return toolchain;
    } catch (error) {
      if (error instanceof ToolchainError) throw new StepFailure(error.code, error.message);
      throw error;
    }
  }

  private baseEnv(sandbox: Sandbox, root: string, node: NodeToolchain | null, pm: ManagerToolchain | null): Record<string, string> {
    const sandboxed = sandbox.mode.kind === 'bwrap';
    // The package manager, then the project's Node (and the npm of its release) first on PATH: `pnpm`, `npm`, `node` and `#!/usr/bin/env node` all find theirs.
    const manager = pm ? `${sandboxed ? MANAGER_BIN : join(pm.dir, 'bin')}:` : '';
    const first = manager + (node ? `${sandboxed ? TOOLCHAIN_BIN : join(node.dir, 'bin')}:` : '');
    return { ...(node ? toolchainEnv() : {}), PATH: `${first}/usr/local/bin:/usr/bin:/bin`, HOME: sandboxed ? '/tmp' : join(root, 'home'), CI: 'true', LANG: 'C.UTF-8' };
  }

  private installEnv(sandbox: Sandbox, downloads: string, root: string, node: NodeToolchain | null, pm: ManagerToolchain | null): Record<string, string> {
    return { ...this.baseEnv(sandbox, root, node, pm), ...managerCacheEnv(sandbox.mode.kind === 'bwrap' ? '/cache' : downloads) };
  }

  private buildEnv(sandbox: Sandbox, variables: Record<string, string>, root: string, node: NodeToolchain | null, pm: ManagerToolchain | null): Record<string, string> {
    return { ...this.baseEnv(sandbox, root, node, pm), NODE_ENV: 'production', npm_config_update_notifier: 'false', YARN_NODE_LINKER: 'node-modules', ...variables };
  }

  private async exec(sandbox: Sandbox, command: string, options: { root: string; src: string; env: Record<string, string>; cacheDir?: string; toolchain: NodeToolchain | null; manager?: ManagerToolchain | null; failure: DeployFailureCode; shutdown: AbortSignal; log: (line: string) => void }): Promise<string> {
    // An abort that landed between two commands (say, while dependencies were being cached) stops the next one.
    if (options.shutdown.aborted) throw new StepFailure(options.failure, `\`${command}\` was not started: the worker is shutting down`);
    await mkdir(join(options.root, 'home'), { recursive: true });
    options.log(`$ ${command}`);
    const result = await sandbox.run({
      workspace: options.src, command, env: options.env, cacheDir: options.cacheDir, toolchainDir: options.toolchain?.dir, managerDir: options.manager?.dir,
      timeoutMs: this.config.BUILD_TIMEOUT_MS, outputLimitBytes: this.config.BUILD_OUTPUT_LIMIT_BYTES, signal: options.shutdown,
    });
    options.log(result.output);
    if (result.timedOut) throw new StepFailure('build_timeout', `\`${command}\` ran longer than ${Math.round(this.config.BUILD_TIMEOUT_MS / 1000)} s and was stopped`);
    if (result.outputExceeded) throw new StepFailure('output_too_large', `\`${command}\` printed more than ${this.config.BUILD_OUTPUT_LIMIT_BYTES} bytes and was stopped`);
    if (result.aborted) throw new StepFailure(options.failure, `\`${command}\` was stopped: the worker is shutting down`);
    if (result.exitCode !== 0) {
      // A sandbox that broke since it was last probed is the machine's fault, not the project's.
      if (sandbox.mode.kind === 'bwrap') {
        this.sandboxes.forget();
        await this.acquireSandbox('the command may not have started');
      }
      // What the tool said about why (a framework's `Error:` line, a fetch that failed); fail() redacts it as the log is.
      const why = buildFailureLines(result.output);
      throw new StepFailure(options.failure, `\`${command}\` exited with ${result.exitCode ?? result.signal}${why ? `:\n${why}` : ''}`);
    }
    return result.output;
  }
}
