import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { buildFailureLines } from '@slipway/analyzer';
import type { DeployFailureCode } from '@slipway/contract';
import { SandboxUnavailableError } from '@slipway/sandbox';
import { MANAGER_BIN, TOOLCHAIN_BIN, toolchainEnv, type ManagerToolchain, type NodeToolchain } from '@slipway/toolchains';
import type { WorkerConfig } from '../config.js';
import { chownTree } from '../sandbox/run-detached.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { BuildDisk } from './build-disk.js';
import type { SandboxProvider } from '../sandbox/sandbox-provider.js';
import type { CommandBudget } from './command-budget.js';
import { limitFailure, usageLine, usageRecord, type UsageLedger } from './build-resources.js';
import { managerCacheEnv } from './manager-commands.js';
import { plainLogText } from './plain-log-text.js';
import { StepFailure, type StepLog } from './step-recorder.js';

export interface ExecOptions {
  root: string;
  src: string;
  env: Record<string, string>;
  cacheDir?: string;
  toolchain: NodeToolchain | null;
  manager?: ManagerToolchain | null;
  failure: DeployFailureCode;
  shutdown: AbortSignal;
  /** What is left of the deploy's time for all its commands together. */
  budget: CommandBudget;
  /** The build's disk: its use goes to the step log, and a command that failed on a full disk fails with `build_disk_exceeded`. */
  disk?: BuildDisk | null;
  /** Where what the command used is recorded (spec.buildResources, the near-limit warning). */
  usage?: UsageLedger & { currentStep: string | null };
  log: StepLog;
}

/**
 * How the install and build steps run the project's own commands: in the sandbox (fail closed),
 * with the project's Node and package manager first on PATH, under the worker's time and output
 * limits, and each way a command can end mapped to the deployment's failure code.
 */
export class ProjectCommands {
  constructor(
    private readonly config: WorkerConfig,
    private readonly sandboxes: SandboxProvider,
  ) {}

  /** Probes (or reuses) the sandbox and hands the workspace to the build user; fails closed. */
  async sandboxFor(root: string): Promise<Sandbox> {
    const sandbox = await this.acquireSandbox('nothing of the project ran');
    if (sandbox.mode.kind === 'bwrap') await chownTree(root, sandbox.mode);
    return sandbox;
  }

  private acquireSandbox(ran: string): Promise<Sandbox> {
    return this.sandboxes.acquire().catch((error: unknown) => {
      if (error instanceof SandboxUnavailableError)
        throw new StepFailure('sandbox_unavailable', `builds cannot be sandboxed on this machine (${ran}): ${error.message}`);
      throw error;
    });
  }

  private baseEnv(sandbox: Sandbox, root: string, node: NodeToolchain | null, pm: ManagerToolchain | null): Record<string, string> {
    const sandboxed = sandbox.mode.kind === 'bwrap';
    // The package manager, then the project's Node (and the npm of its release) first on PATH: `pnpm`, `npm`, `node` and `#!/usr/bin/env node` all find theirs.
    const manager = pm ? `${sandboxed ? MANAGER_BIN : join(pm.dir, 'bin')}:` : '';
    const first = manager + (node ? `${sandboxed ? TOOLCHAIN_BIN : join(node.dir, 'bin')}:` : '');
    return {
      ...(node ? toolchainEnv() : {}),
      PATH: `${first}/usr/local/bin:/usr/bin:/bin`,
      HOME: sandboxed ? '/tmp' : join(root, 'home'),
      CI: 'true',
      LANG: 'C.UTF-8',
    };
  }

  installEnv(sandbox: Sandbox, downloads: string, root: string, node: NodeToolchain | null, pm: ManagerToolchain | null): Record<string, string> {
    return { ...this.baseEnv(sandbox, root, node, pm), ...managerCacheEnv(sandbox.mode.kind === 'bwrap' ? '/cache' : downloads, pm?.manager ?? null) };
  }

  buildEnv(sandbox: Sandbox, variables: Record<string, string>, root: string, node: NodeToolchain | null, pm: ManagerToolchain | null): Record<string, string> {
    return {
      ...this.baseEnv(sandbox, root, node, pm),
      NODE_ENV: 'production',
      npm_config_update_notifier: 'false',
      YARN_NODE_LINKER: 'node-modules',
      ...variables,
    };
  }

  async exec(sandbox: Sandbox, command: string, options: ExecOptions): Promise<string> {
    // An abort that landed between two commands (say, while dependencies were being cached) stops the next one.
    if (options.shutdown.aborted) throw new StepFailure(options.failure, `\`${command}\` was not started: the worker is shutting down`);
    await mkdir(join(options.root, 'home'), { recursive: true });
    const totalSeconds = Math.round(options.budget.totalMs / 1000);
    if (options.budget.remainingMs <= 0)
      throw new StepFailure(
        'build_timeout',
        `\`${command}\` was not started: this deploy's commands together already used their ${totalSeconds} s (BUILD_TOTAL_TIMEOUT_MS)`,
      );
    options.log(`$ ${command}`);
    // Followers see the command and its output as it runs (the feed redacts it); the step log gets it whole below.
    const live = options.log.live?.();
    live?.(`$ ${command}\n`);
    // Whichever ends first: this command's own limit or what is left of the deploy's.
    const byBudget = options.budget.remainingMs < this.config.BUILD_TIMEOUT_MS;
    const startedAt = performance.now();
    const watch = options.disk?.watch();
    const result = await sandbox
      .run({
        workspace: options.src,
        command,
        env: options.env,
        cacheDir: options.cacheDir,
        toolchainDir: options.toolchain?.dir,
        managerDir: options.manager?.dir,
        timeoutMs: byBudget ? options.budget.remainingMs : this.config.BUILD_TIMEOUT_MS,
        outputLimitBytes: this.config.BUILD_OUTPUT_LIMIT_BYTES,
        signal: options.shutdown,
        onOutput: live,
      })
      .catch((error: unknown) => {
        // The command's cgroup could not be made: it did not start.
        if (error instanceof SandboxUnavailableError) throw new StepFailure('sandbox_unavailable', `\`${command}\` was not started: ${error.message}`);
        throw error;
      });
    options.budget.spend(performance.now() - startedAt);
    // As the log keeps it: the warnings and the failure lines below are read from this, never from the raw output.
    const output = plainLogText(result.output);
    options.log(output);
    const disk = watch && (await watch.stop());
    if (disk) options.log(BuildDisk.describe(disk.peakBytes, disk.usage, options.disk!.sizeBytes));
    const use = result.usage ? usageRecord(options.usage?.currentStep ?? options.failure.replace(/_failed$/, ''), command, result.usage) : null;
    if (use) {
      options.log(usageLine(use));
      options.usage?.recordUsage(use);
    }
    if (result.aborted) throw new StepFailure(options.failure, `\`${command}\` was stopped: the worker is shutting down`);
    // A limit the kernel enforced explains a failure better than its symptoms (a timeout, an exit code).
    const limited = use && result.exitCode !== 0 ? limitFailure(command, use) : null;
    if (limited) throw limited;
    if (result.timedOut && byBudget)
      throw new StepFailure(
        'build_timeout',
        `\`${command}\` was stopped: this deploy's commands together ran longer than ${totalSeconds} s (BUILD_TOTAL_TIMEOUT_MS)`,
      );
    if (result.timedOut)
      throw new StepFailure('build_timeout', `\`${command}\` ran longer than ${Math.round(this.config.BUILD_TIMEOUT_MS / 1000)} s and was stopped`);
    if (result.outputExceeded)
      throw new StepFailure('output_too_large', `\`${command}\` printed more than ${this.config.BUILD_OUTPUT_LIMIT_BYTES} bytes and was stopped`);
    if (result.exitCode !== 0) {
      // The kernel said no space left (or no inode) on the build's disk: the budget, not the project's code, stopped it.
      const full = await options.disk?.full();
      if (full) throw new StepFailure('build_disk_exceeded', options.disk!.exceededMessage(`\`${command}\``, full));
      // A sandbox that broke since it was last probed is the machine's fault, not the project's.
      if (sandbox.mode.kind === 'bwrap') {
        this.sandboxes.forget();
        await this.acquireSandbox('the command may not have started');
      }
      // What the tool said about why (a framework's `Error:` line, a fetch that failed); fail() redacts it as the log is.
      const why = buildFailureLines(output);
      throw new StepFailure(options.failure, `\`${command}\` exited with ${result.exitCode ?? result.signal}${why ? `:\n${why}` : ''}`);
    }
    return output;
  }
}
