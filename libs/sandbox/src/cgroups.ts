import { existsSync, realpathSync } from 'node:fs';
import { mkdir, readFile, readdir, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CgroupStatsReader, type CgroupStats } from './cgroup-stats.js';

export type { CgroupStats } from './cgroup-stats.js';

export interface AppLimits {
  memoryBytes: number;
  pids: number;
  /** CPUs' worth of time per period (1 = one core). */
  cpus: number;
  /**
   * Share of the CPU against siblings when the machine is busy, on cgroup v2's scale (1–10000;
   * 100 is the kernel's default, what apps get). v1: `cpu.shares` = weight × 1024 / 100.
   */
  cpuWeight?: number;
}

/** The directory every cgroup of one kind hangs from, and what binds all of them together. */
export interface CgroupParent {
  /** `slipway-apps` (releases), `slipway-builds` (build steps). */
  name: string;
  /** CPU weight of the whole parent against its siblings (the apps' parent, the services). */
  cpuWeight?: number;
  /** CPUs all children together may use. */
  cpus?: number;
}

export interface AppCgroup {
  /** The cgroup's name under its parent. */
  readonly name: string;
  /** `cgroup.procs` files a process writes its pid to before it runs the app. */
  procsFiles: string[];
  /** Pids inside (every controller sees the same set). */
  pids(): Promise<number[]>;
  /** What the processes used and which limits they ran into (peaks and counters since creation). */
  stats(): Promise<CgroupStats>;
  /**
   * SIGKILLs everything inside (v2 `cgroup.kill`; v1: forks are refused, then every member is
   * killed until none is left) — `setsid` and double forks included, since membership is inherited.
   * Resolves the number of processes still there (0 unless the kernel is slow to let go).
   */
  killAll(): Promise<number>;
  /** Removes the cgroup once its processes are gone. */
  remove(): Promise<void>;
}

const ROOT = '/sys/fs/cgroup';
const PERIOD_US = 100_000;
const V1_REQUIRED = ['memory', 'pids', 'cpu'] as const;

async function ownPaths(): Promise<Map<string, string>> {
  const paths = new Map<string, string>();
  for (const line of (await readFile('/proc/self/cgroup', 'utf8')).split('\n')) {
    const [, controllers, path] = line.split(':');
    if (controllers === undefined || path === undefined) continue;
    for (const c of controllers.split(',')) paths.set(c, path);
  }
  return paths;
}

async function tryWrite(file: string, value: string): Promise<boolean> {
  return writeFile(file, value).then(
    () => true,
    () => false,
  );
}

async function mustWrite(dir: string, file: string, value: string): Promise<void> {
  try {
    await writeFile(join(dir, file), value);
  } catch (error) {
    throw new Error(`cannot set ${file} to ${value} in ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
  }
}

const shares = (weight: number) => Math.max(2, Math.round((weight * 1024) / 100));
const quota = (cpus: number) => `${Math.round(cpus * PERIOD_US)}`;

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * Cgroups for memory, process count and CPU, one per release (runtime) or per build step (build
 * worker), under a parent of their own: cgroup v2 when its controllers can be delegated below
 * this process's own cgroup, else the v1 hierarchies (memory, pids, cpu; cpuacct for CPU time
 * where it is mounted apart) when they are writable. `detect()` answers null and `open()` says
 * why when neither works.
 */
export class Cgroups {
  private constructor(
    readonly version: 1 | 2,
    /** Parent directory per controller (v2: one directory for all). */
    private readonly parents: Map<string, string>,
  ) {}

  /** The runtime's: `slipway-apps`, null when no cgroup can be made (the caller falls back to rlimits and says so). */
  static async detect(parent: CgroupParent = { name: 'slipway-apps' }): Promise<Cgroups | null> {
    const opened = await Cgroups.open(parent);
    return 'cgroups' in opened ? opened.cgroups : null;
  }

  /** Cgroups under `parent`, or why none can be made here (for an error message naming the fix). */
  static async open(parent: CgroupParent): Promise<{ cgroups: Cgroups } | { reason: string }> {
    const uid = process.getuid?.() ?? -1;
    if (uid !== 0) return { reason: `only a process running as root can create cgroups (this one runs as uid ${uid})` };
    const own = await ownPaths().catch(() => new Map<string, string>());
    const v2 = await Cgroups.parentsV2(own.get('') ?? null, parent);
    const v1 = v2 ?? (await Cgroups.parentsV1(own, parent));
    if ('reason' in v1) return v1;
    const cgroups = new Cgroups(v2 ? 2 : 1, v1.parents);
    // Probe: a child where every limit can be written.
    try {
      const group = await cgroups.create(`probe-${process.pid}-${Date.now()}`, { memoryBytes: 64 << 20, pids: 16, cpus: 1, cpuWeight: parent.cpuWeight });
      await group.remove();
    } catch (error) {
      return { reason: `a cgroup cannot be set up under ${[...v1.parents.values()].join(', ')}: ${(error as Error).message}` };
    }
    return { cgroups };
  }

  private static async parentsV1(own: Map<string, string>, parent: CgroupParent): Promise<{ parents: Map<string, string> } | { reason: string }> {
    const parents = new Map<string, string>();
    const controllers: string[] = [...V1_REQUIRED];
    // CPU time is read from cpuacct; where it is mounted with cpu, the cpu directory has it.
    const cpuacct = join(ROOT, 'cpuacct');
    if (existsSync(join(cpuacct, 'cgroup.procs')) && realpathSync(cpuacct) !== realpathSync(join(ROOT, 'cpu'))) controllers.push('cpuacct');
    for (const controller of controllers) {
      const mount = join(ROOT, controller);
      if (!existsSync(join(mount, 'cgroup.procs'))) {
        return { reason: `no cgroup v2 with the memory, pids and cpu controllers, and the cgroup v1 ${controller} hierarchy is not mounted at ${mount}` };
      }
      const dir = join(mount, own.get(controller) ?? '/', parent.name);
      try {
        await mkdir(dir, { recursive: true });
      } catch (error) {
        return {
          reason: `cannot create ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message} (/sys/fs/cgroup is read-only or not ours)`,
        };
      }
      parents.set(controller, dir);
    }
    try {
      const cpu = parents.get('cpu')!;
      if (parent.cpuWeight !== undefined) await mustWrite(cpu, 'cpu.shares', String(shares(parent.cpuWeight)));
      if (parent.cpus !== undefined) {
        await mustWrite(cpu, 'cpu.cfs_period_us', String(PERIOD_US));
        await mustWrite(cpu, 'cpu.cfs_quota_us', quota(parent.cpus));
      }
    } catch (error) {
      return { reason: (error as Error).message };
    }
    return { parents };
  }

  private static async parentsV2(ownPath: string | null, parent: CgroupParent): Promise<{ parents: Map<string, string> } | null> {
    if (ownPath === null || !existsSync(join(ROOT, 'cgroup.controllers'))) return null;
    const controllers = (await readFile(join(ROOT, 'cgroup.controllers'), 'utf8').catch(() => '')).split(/\s+/);
    if (!['memory', 'pids', 'cpu'].every((c) => controllers.includes(c))) return null;
    // Delegation below a cgroup that holds processes is not allowed (no internal processes), so
    // the parent sits beside this process's own cgroup, under its parent.
    const dir = join(ROOT, ownPath === '/' ? '' : join(ownPath, '..'), parent.name);
    try {
      await mkdir(dir, { recursive: true });
      if (!(await tryWrite(join(dir, 'cgroup.subtree_control'), '+memory +pids +cpu'))) return null;
      if (parent.cpuWeight !== undefined) await mustWrite(dir, 'cpu.weight', String(parent.cpuWeight));
      if (parent.cpus !== undefined) await mustWrite(dir, 'cpu.max', `${quota(parent.cpus)} ${PERIOD_US}`);
    } catch {
      return null;
    }
    return { parents: new Map([['', dir]]) };
  }

  /**
   * Removes the children whose name `matches` (those a killed worker left), with whatever still
   * runs in them: a build's processes die with their worker (`--pdeathsig`), but anything that
   * got out of that chain (a setsid'd process, a network helper) is still inside its cgroup, and
   * nobody watches it any more. Answers how many processes were killed.
   */
  async sweep(matches: (name: string) => boolean): Promise<number> {
    const names = new Set<string>();
    for (const parent of this.parents.values()) for (const name of await readdir(parent).catch(() => [] as string[])) if (matches(name)) names.add(name);
    let killed = 0;
    for (const name of names) {
      const dirs = new Map(
        [...this.parents].map(([controller, parent]) => [controller, join(parent, name)] as const).filter(([, dir]) => existsSync(join(dir, 'cgroup.procs'))),
      );
      const group = new Cgroup(name, this.version, dirs, { memoryBytes: 0, pids: 0, cpus: 0 });
      killed += (await group.pids()).length;
      await group.killAll();
      await group.remove();
    }
    return killed;
  }

  /**
   * The cgroup `name` a previous process made (a restarted runtime supervisor taking over a
   * running release): its limits stay as they were set; null when it is not there any more.
   */
  existing(name: string, limits: AppLimits): AppCgroup | null {
    const dirs = new Map([...this.parents].map(([controller, parent]) => [controller, join(parent, name)]));
    if (![...dirs.values()].every((dir) => existsSync(join(dir, 'cgroup.procs')))) return null;
    return new Cgroup(name, this.version, dirs, limits);
  }

  async create(name: string, limits: AppLimits): Promise<AppCgroup> {
    const dirs = new Map<string, string>();
    try {
      for (const [controller, parent] of this.parents) {
        const dir = join(parent, name);
        // Recursive: a release started again reuses its cgroup (the runtime names them by release).
        await mkdir(dir, { recursive: true });
        dirs.set(controller, dir);
        if (this.version === 2) {
          await mustWrite(dir, 'memory.max', String(limits.memoryBytes));
          if (existsSync(join(dir, 'memory.swap.max'))) await mustWrite(dir, 'memory.swap.max', '0');
          await mustWrite(dir, 'pids.max', String(limits.pids));
          await mustWrite(dir, 'cpu.max', `${quota(limits.cpus)} ${PERIOD_US}`);
          if (limits.cpuWeight !== undefined) await mustWrite(dir, 'cpu.weight', String(limits.cpuWeight));
        } else if (controller === 'memory') {
          await mustWrite(dir, 'memory.limit_in_bytes', String(limits.memoryBytes));
          // No swap: memory + swap may not exceed memory (only where swap accounting is on).
          if (existsSync(join(dir, 'memory.memsw.limit_in_bytes'))) await mustWrite(dir, 'memory.memsw.limit_in_bytes', String(limits.memoryBytes));
        } else if (controller === 'pids') {
          await mustWrite(dir, 'pids.max', String(limits.pids));
        } else if (controller === 'cpu') {
          await mustWrite(dir, 'cpu.cfs_period_us', String(PERIOD_US));
          await mustWrite(dir, 'cpu.cfs_quota_us', quota(limits.cpus));
          if (limits.cpuWeight !== undefined) await mustWrite(dir, 'cpu.shares', String(shares(limits.cpuWeight)));
        }
      }
    } catch (error) {
      await Promise.all([...dirs.values()].map((d) => rmdir(d).catch(() => undefined)));
      throw error;
    }
    return new Cgroup(name, this.version, dirs, limits);
  }
}

class Cgroup implements AppCgroup {
  readonly procsFiles: string[];
  private readonly reader: CgroupStatsReader;

  constructor(
    readonly name: string,
    private readonly version: 1 | 2,
    private readonly dirs: Map<string, string>,
    limits: AppLimits,
  ) {
    this.procsFiles = [...dirs.values()].map((d) => join(d, 'cgroup.procs'));
    this.reader = new CgroupStatsReader(version, dirs, limits);
  }

  async pids(): Promise<number[]> {
    return (await readFile(this.procsFiles[0]!, 'utf8').catch(() => '')).split('\n').filter(Boolean).map(Number);
  }

  stats(): Promise<CgroupStats> {
    return this.reader.read();
  }

  async killAll(): Promise<number> {
    const v2 = this.dirs.get('');
    if (v2 && (await tryWrite(join(v2, 'cgroup.kill'), '1'))) {
      for (let i = 0; i < 100 && (await this.pids()).length > 0; i++) await sleep(20);
      return (await this.pids()).length;
    }
    // v1 has no cgroup.kill: first no process inside may fork any more, then kill until empty.
    const pids = this.dirs.get('pids') ?? v2;
    if (pids) await tryWrite(join(pids, 'pids.max'), '0');
    for (let round = 0; round < 250; round++) {
      const members = await this.pids();
      if (members.length === 0) return 0;
      for (const pid of members) {
        try {
          if (pid > 1) process.kill(pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
      await sleep(20);
    }
    return (await this.pids()).length;
  }

  async remove(): Promise<void> {
    for (const dir of this.dirs.values()) {
      // The kernel lets go of a cgroup a moment after its last process exits.
      for (let attempt = 0; attempt < 100; attempt++) {
        const done = await rmdir(dir).then(
          () => true,
          (error: NodeJS.ErrnoException) => error.code === 'ENOENT',
        );
        if (done) break;
        await sleep(50);
      }
    }
  }
}

/** Exit status of the entry shell when it cannot join its cgroup (nothing else ran). */
export const CGROUP_ENTRY_FAILED = 125;

/**
 * A root shell that writes its own pid into each `cgroup.procs` file (they are its arguments: it
 * reads no variable) and then execs `then`, typically `setpriv` dropping to an unprivileged user:
 * nothing of what follows ever runs outside the cgroup, and every descendant (`setsid` and double
 * forks included) is born inside it. `label` is the shell's `$0` (what `ps` shows meanwhile).
 */
export function cgroupEntryArgv(procsFiles: string[], then: string[], label = 'slipway-cgroup'): string[] {
  const script = `n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit ${CGROUP_ENTRY_FAILED}; shift; n=$((n - 1)); done; exec "$@"`;
  return ['/bin/sh', '-c', script, label, String(procsFiles.length), ...procsFiles, ...then];
}
