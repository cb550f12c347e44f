import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** What a cgroup's processes used and which limits they ran into, since it was created. */
export interface CgroupStats {
  /** Highest memory charged at once (v1 `memory.max_usage_in_bytes`, v2 `memory.peak`). */
  memoryPeakBytes: number | null;
  memoryLimitBytes: number;
  /** Memory charged now (v1 `memory.usage_in_bytes`, v2 `memory.current`). */
  memoryBytes?: number | null;
  /** Processes the kernel's OOM killer took inside (v1 `memory.oom_control` oom_kill, v2 `memory.events` oom_kill). */
  oomKills: number;
  /** Times the memory limit was reached (v1 `memory.failcnt`, v2 `memory.events` max): reclaim, not necessarily a kill. */
  memoryLimitHits: number;
  /** CPU time of every process (v1 `cpuacct.usage`, v2 `cpu.stat` usage_usec). */
  cpuSeconds: number | null;
  /** Highest number of tasks (processes and threads) at once (`pids.peak`, where the kernel has it). */
  tasksPeak: number | null;
  tasksLimit: number;
  /** Forks refused because the cgroup was at `pids.max` (`pids.events` max). */
  pidsLimitHits: number;
}

async function text(file: string): Promise<string | null> {
  return readFile(file, 'utf8').catch(() => null);
}

async function number(file: string): Promise<number | null> {
  const value = await text(file);
  if (value === null) return null;
  const n = Number(value.trim());
  return Number.isFinite(n) ? n : null;
}

/** `key value` lines (memory.events, pids.events, cpu.stat, memory.oom_control). */
async function keyed(file: string, key: string): Promise<number | null> {
  const value = await text(file);
  const line = value?.split('\n').find((l) => l.startsWith(`${key} `));
  return line ? Number(line.slice(key.length + 1)) : null;
}

/** Reads a cgroup's peaks and counters, from whichever files its hierarchy version has. */
export class CgroupStatsReader {
  constructor(
    private readonly version: 1 | 2,
    private readonly dirs: Map<string, string>,
    private readonly limits: { memoryBytes: number; pids: number },
  ) {}

  read(): Promise<CgroupStats> {
    return this.version === 2 ? this.readV2(this.dirs.get('')!) : this.readV1();
  }

  private async readV2(dir: string): Promise<CgroupStats> {
    const usage = await keyed(join(dir, 'cpu.stat'), 'usage_usec');
    return {
      memoryPeakBytes: await number(join(dir, 'memory.peak')),
      memoryBytes: await number(join(dir, 'memory.current')),
      memoryLimitBytes: this.limits.memoryBytes,
      oomKills: (await keyed(join(dir, 'memory.events'), 'oom_kill')) ?? 0,
      memoryLimitHits: (await keyed(join(dir, 'memory.events'), 'max')) ?? 0,
      cpuSeconds: usage === null ? null : usage / 1e6,
      tasksPeak: await number(join(dir, 'pids.peak')),
      tasksLimit: this.limits.pids,
      pidsLimitHits: (await keyed(join(dir, 'pids.events'), 'max')) ?? 0,
    };
  }

  private async readV1(): Promise<CgroupStats> {
    const memory = this.dirs.get('memory')!;
    const pids = this.dirs.get('pids')!;
    const cpuacct = this.dirs.get('cpuacct') ?? this.dirs.get('cpu')!;
    const usageNs = await number(join(cpuacct, 'cpuacct.usage'));
    return {
      memoryPeakBytes: await number(join(memory, 'memory.max_usage_in_bytes')),
      memoryBytes: await number(join(memory, 'memory.usage_in_bytes')),
      memoryLimitBytes: this.limits.memoryBytes,
      oomKills: (await keyed(join(memory, 'memory.oom_control'), 'oom_kill')) ?? 0,
      memoryLimitHits: (await number(join(memory, 'memory.failcnt'))) ?? 0,
      cpuSeconds: usageNs === null ? null : usageNs / 1e9,
      tasksPeak: await number(join(pids, 'pids.peak')),
      tasksLimit: this.limits.pids,
      pidsLimitHits: (await keyed(join(pids, 'pids.events'), 'max')) ?? 0,
    };
  }
}
