import { Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { LIMITS } from '@slipway/contract';
import { Cgroups, SandboxUnavailableError, cgroupEntryArgv, tool, type AppCgroup, type CgroupStats } from '@slipway/sandbox';
import type { WorkerConfig } from '../config.js';

export interface BuildLimitSettings {
  /** BUILD_LIMITS: `cgroup` (fail closed) or `rlimit` (the operator's explicit choice). */
  mode: 'cgroup' | 'rlimit';
  memoryBytes: number;
  pids: number;
  /** CPUs one command may use. */
  cpus: number;
  /** CPUs all builds of this machine together may use. */
  cpusTotal: number;
  /** cgroup v2 scale (apps: 100). */
  cpuWeight: number;
  /** The parent cgroup's name (default `slipway-builds`; tests use their own). */
  parent?: string;
}

/** What a finished command used, and which limit it ran into (null: rlimits only, nothing measured). */
export type CommandUsage = CgroupStats;

/** The limits of one command while it runs. */
export interface CommandLimits {
  /** The command line that runs `then` inside the limits (started as the worker's own user). */
  wrap(then: string[]): string[];
  /** Kills everything of the command still running (a timeout, the output limit, a shutdown). */
  kill(): Promise<void>;
  /** After the command's first process exited: what it used, then everything left killed and the cgroup removed. */
  finish(): Promise<CommandUsage | null>;
}

const PARENT = 'slipway-builds';

/** The contract's defaults (a 2-core machine), in cgroups. */
export const DEFAULT_BUILD_LIMITS: BuildLimitSettings = {
  mode: 'cgroup',
  memoryBytes: LIMITS.build.memoryMb * 1024 * 1024,
  pids: LIMITS.build.tasks,
  cpus: LIMITS.build.cpus,
  cpusTotal: LIMITS.build.cpus,
  cpuWeight: LIMITS.build.cpuWeight,
};

/** The worker's settings (config.ts) as the limits every command runs under. */
export function buildLimitSettings(
  config: Pick<WorkerConfig, 'BUILD_LIMITS' | 'BUILD_MEMORY_MB' | 'BUILD_PIDS' | 'BUILD_CPUS' | 'BUILD_CPUS_TOTAL' | 'BUILD_CPU_WEIGHT'>,
): BuildLimitSettings {
  return {
    mode: config.BUILD_LIMITS,
    memoryBytes: config.BUILD_MEMORY_MB * 1024 * 1024,
    pids: config.BUILD_PIDS,
    cpus: config.BUILD_CPUS,
    cpusTotal: config.BUILD_CPUS_TOTAL ?? config.BUILD_CPUS,
    cpuWeight: config.BUILD_CPU_WEIGHT,
  };
}
const STEP = /^step-(\d+)-/;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** How to get cgroups, for an operator reading a failed deploy. */
export const CGROUP_FIX =
  'run the build worker as root with /sys/fs/cgroup writable (cgroup v2 with the memory, pids and cpu controllers delegable, or the v1 memory, pids and cpu hierarchies; in a container: a writable cgroup mount, e.g. docker run --cgroupns=host -v /sys/fs/cgroup:/sys/fs/cgroup:rw), or set BUILD_LIMITS=rlimit to run builds under rlimits only (every deploy then carries the build_limits_rlimit_only hazard)';

/**
 * Every install and build command in a cgroup of its own under `slipway-builds`, made before its
 * first process starts (the entry shell joins it, then drops to the build user): memory without
 * swap, tasks, a CPU quota, and a CPU weight below the apps'. The parent holds all builds
 * together under `cpusTotal` and the same weight, so running apps come first whatever builds do.
 * With BUILD_LIMITS=rlimit: `prlimit --nproc --as` only (nothing measured; a hazard on every deploy).
 */
export class BuildLimits {
  private counter = 0;

  private constructor(
    readonly settings: BuildLimitSettings,
    private readonly cgroups: Cgroups | null,
  ) {}

  /** Throws SandboxUnavailableError (with the fix) when cgroups are asked for and cannot be made. */
  static async open(settings: BuildLimitSettings): Promise<BuildLimits> {
    if (settings.mode === 'rlimit') return new BuildLimits(settings, null);
    const opened = await Cgroups.open({ name: settings.parent ?? PARENT, cpuWeight: settings.cpuWeight, cpus: settings.cpusTotal });
    if ('reason' in opened)
      throw new SandboxUnavailableError(`builds cannot be held in cgroups (memory, process and CPU limits): ${opened.reason}; ${CGROUP_FIX}`);
    // Cgroups of commands whose worker was killed: their processes died with it (--pdeathsig),
    // and whatever got out of that chain is killed here, so no build runs on unwatched.
    const killed = await opened.cgroups.sweep((name) => {
      const pid = Number(STEP.exec(name)?.[1]);
      return Boolean(pid) && pid !== process.pid && !alive(pid);
    });
    if (killed) new Logger('sandbox').warn(`killed ${killed} process(es) of builds whose worker had stopped`);
    return new BuildLimits(settings, opened.cgroups);
  }

  /** For the worker's log: what every command runs under. */
  describe(): string {
    const { settings } = this;
    const memory = `${Math.round(settings.memoryBytes / 1024 / 1024)} MiB`;
    if (!this.cgroups) return `rlimits only (BUILD_LIMITS=rlimit): ${settings.pids} processes of the build user, ${memory} of address space per process`;
    return `a cgroup v${this.cgroups.version} per command: ${memory} of memory (no swap), ${settings.pids} tasks, ${settings.cpus} CPUs (all builds together ${settings.cpusTotal}), CPU weight ${settings.cpuWeight} (apps: 100)`;
  }

  /** The limits of the next command; throws SandboxUnavailableError when its cgroup cannot be made (nothing started). */
  async forCommand(): Promise<CommandLimits> {
    const { settings } = this;
    if (!this.cgroups) {
      const rlimits = [tool('prlimit'), `--nproc=${settings.pids}`, `--as=${settings.memoryBytes}`, '--'];
      return { wrap: (then) => [...rlimits, ...then], kill: async () => undefined, finish: async () => null };
    }
    const name = `step-${process.pid}-${++this.counter}-${randomBytes(3).toString('hex')}`;
    let cgroup: AppCgroup;
    try {
      cgroup = await this.cgroups.create(name, { memoryBytes: settings.memoryBytes, pids: settings.pids, cpus: settings.cpus, cpuWeight: settings.cpuWeight });
    } catch (error) {
      throw new SandboxUnavailableError(`the build's cgroup cannot be made: ${(error as Error).message}; ${CGROUP_FIX}`);
    }
    return new CgroupCommand(cgroup);
  }
}

class CgroupCommand implements CommandLimits {
  /** Counters are read before the first kill: a v1 kill refuses forks, which pids.events would count. */
  private before?: Promise<CgroupStats>;
  private killing?: Promise<number>;

  constructor(private readonly cgroup: AppCgroup) {}

  wrap(then: string[]): string[] {
    return cgroupEntryArgv(this.cgroup.procsFiles, then, 'slipway-build');
  }

  async kill(): Promise<void> {
    this.before ??= this.cgroup.stats();
    await this.before;
    this.killing ??= this.cgroup.killAll();
    await this.killing;
  }

  async finish(): Promise<CommandUsage> {
    this.before ??= this.cgroup.stats();
    const stats = await this.before;
    // Everything the command left behind (setsid daemons, double forks) goes with it.
    await this.killing;
    await this.cgroup.killAll();
    await this.cgroup.remove();
    return stats;
  }
}
