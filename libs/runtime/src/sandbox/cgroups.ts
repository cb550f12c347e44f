import { existsSync } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface AppLimits {
  memoryBytes: number;
  pids: number;
  /** CPUs' worth of time per period (1 = one core). */
  cpus: number;
}

export interface AppCgroup {
  /** `cgroup.procs` files a process writes its pid to before it runs the app. */
  procsFiles: string[];
  /** Pids inside (every controller sees the same set). */
  pids(): Promise<number[]>;
  /** Removes the cgroup once its processes are gone. */
  remove(): Promise<void>;
}

const ROOT = '/sys/fs/cgroup';
const PERIOD_US = 100_000;

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

/**
 * Per-release cgroups for memory, process count and CPU: cgroup v2 when its controllers can be
 * delegated below this process's own cgroup, else the v1 hierarchies (memory, pids, cpu) when
 * they are writable. `null` when neither works (the caller falls back to rlimits and says so).
 */
export class Cgroups {
  private constructor(
    readonly version: 1 | 2,
    /** Parent directory per controller (v2: one directory for all). */
    private readonly parents: Map<string, string>,
  ) {}

  static async detect(): Promise<Cgroups | null> {
    if (process.getuid?.() !== 0) return null;
    const own = await ownPaths().catch(() => new Map<string, string>());
    const v2 = await Cgroups.detectV2(own.get('') ?? null);
    if (v2) return v2;
    const parents = new Map<string, string>();
    for (const controller of ['memory', 'pids', 'cpu']) {
      const mount = join(ROOT, controller);
      if (!existsSync(join(mount, 'cgroup.procs'))) return null;
      const parent = join(mount, own.get(controller) ?? '/', 'slipway-apps');
      try {
        await mkdir(parent, { recursive: true });
      } catch {
        return null;
      }
      parents.set(controller, parent);
    }
    // Probe: a child where every limit can be written.
    const probe = new Cgroups(1, parents);
    try {
      const group = await probe.create(`probe-${process.pid}`, { memoryBytes: 64 << 20, pids: 16, cpus: 1 });
      await group.remove();
      return probe;
    } catch {
      return null;
    }
  }

  private static async detectV2(ownPath: string | null): Promise<Cgroups | null> {
    if (ownPath === null || !existsSync(join(ROOT, 'cgroup.controllers'))) return null;
    const controllers = (await readFile(join(ROOT, 'cgroup.controllers'), 'utf8').catch(() => '')).split(/\s+/);
    if (!['memory', 'pids', 'cpu'].every((c) => controllers.includes(c))) return null;
    // Delegation below a cgroup that holds processes is not allowed (no internal processes), so
    // the apps' parent sits beside this process's own cgroup, under its parent.
    const parent = join(ROOT, ownPath === '/' ? '' : join(ownPath, '..'), 'slipway-apps');
    try {
      await mkdir(parent, { recursive: true });
      if (!(await tryWrite(join(parent, 'cgroup.subtree_control'), '+memory +pids +cpu'))) return null;
    } catch {
      return null;
    }
    return new Cgroups(2, new Map([['', parent]]));
  }

  async create(name: string, limits: AppLimits): Promise<AppCgroup> {
    const dirs: string[] = [];
    const write = async (dir: string, file: string, value: string) => {
      if (!(await tryWrite(join(dir, file), value))) throw new Error(`cannot set ${file} in ${dir}`);
    };
    try {
      for (const [controller, parent] of this.parents) {
        const dir = join(parent, name);
        await mkdir(dir, { recursive: true });
        dirs.push(dir);
        if (this.version === 2) {
          await write(dir, 'memory.max', String(limits.memoryBytes));
          await write(dir, 'memory.swap.max', '0').catch(() => undefined);
          await write(dir, 'pids.max', String(limits.pids));
          await write(dir, 'cpu.max', `${Math.round(limits.cpus * PERIOD_US)} ${PERIOD_US}`);
        } else if (controller === 'memory') {
          await write(dir, 'memory.limit_in_bytes', String(limits.memoryBytes));
        } else if (controller === 'pids') {
          await write(dir, 'pids.max', String(limits.pids));
        } else {
          await write(dir, 'cpu.cfs_period_us', String(PERIOD_US));
          await write(dir, 'cpu.cfs_quota_us', String(Math.round(limits.cpus * PERIOD_US)));
        }
      }
    } catch (error) {
      await Promise.all(dirs.map((d) => rmdir(d).catch(() => undefined)));
      throw error;
    }
    const procsFiles = dirs.map((d) => join(d, 'cgroup.procs'));
    return {
      procsFiles,
      pids: async () =>
        (await readFile(procsFiles[0]!, 'utf8').catch(() => ''))
          .split('\n')
          .filter(Boolean)
          .map(Number),
      remove: async () => {
        for (const dir of dirs) {
          // The kernel lets go of a cgroup a moment after its last process exits.
          for (let attempt = 0; attempt < 20; attempt++) {
            const done = await rmdir(dir).then(
              () => true,
              (error: NodeJS.ErrnoException) => error.code === 'ENOENT',
            );
            if (done) break;
            await new Promise((r) => setTimeout(r, 50));
          }
        }
      },
    };
  }
}
