import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, readdir, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { waitFor } from '@slipway/testing';
import { Cgroups, cgroupEntryArgv } from '../src/index.js';

const ROOT = process.getuid?.() === 0;
const PARENT = `slipway-cgroups-spec-${process.pid}`;
const MiB = 1024 * 1024;

/** This test's parent in each hierarchy (v1: under this process's own cgroup per controller). */
async function parents(): Promise<string[]> {
  const own = new Map(
    (await readFile('/proc/self/cgroup', 'utf8'))
      .split('\n')
      .filter(Boolean)
      .flatMap((line) => {
        const [, controllers = '', path = '/'] = line.split(':');
        return controllers.split(',').map((c) => [c, path] as const);
      }),
  );
  return ['memory', 'pids', 'cpu', 'cpuacct', '']
    .map((c) => join('/sys/fs/cgroup', c, own.get(c) ?? '/', PARENT))
    .filter((dir) => existsSync(join(dir, 'cgroup.procs')));
}

const read = (dir: string, file: string) => readFile(join(dir, file), 'utf8').then((s) => s.trim());

/** Starts `sh -c script` inside the cgroup (through the entry shell, as builds and apps start). */
function inside(procs: string[], script: string) {
  const [file, ...args] = cgroupEntryArgv(procs, ['/bin/sh', '-c', script]);
  const child = spawn(file!, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return { child, output: () => out, exited: new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code))) };
}

(ROOT ? describe : describe.skip)('Cgroups (real cgroups, skipped unless root: only root can create cgroups)', () => {
  let cgroups: Cgroups;

  beforeAll(async () => {
    const opened = await Cgroups.open({ name: PARENT, cpuWeight: 25, cpus: 1.5 });
    if (!('cgroups' in opened)) throw new Error(opened.reason);
    cgroups = opened.cgroups;
  });

  afterAll(async () => {
    // Children a failed test left first, then the parent itself.
    for (const dir of await parents()) {
      for (const entry of await readdir(dir, { withFileTypes: true })) if (entry.isDirectory()) await rmdir(join(dir, entry.name)).catch(() => undefined);
      await rmdir(dir).catch(() => undefined);
    }
  });

  it('names its parent and gives it the weight and CPU cap of all its children together', async () => {
    const dirs = await parents();
    expect(dirs.length).toBeGreaterThan(0);
    if (cgroups.version === 1) {
      const cpu = dirs.find((d) => d.includes('/cpu/'))!;
      expect(await read(cpu, 'cpu.shares')).toBe('256');
      expect(await read(cpu, 'cpu.cfs_quota_us')).toBe('150000');
    } else {
      expect(await read(dirs[0]!, 'cpu.weight')).toBe('25');
      expect(await read(dirs[0]!, 'cpu.max')).toBe('150000 100000');
    }
  });

  it('writes every limit, memory without swap', async () => {
    const group = await cgroups.create('limits', { memoryBytes: 128 * MiB, pids: 32, cpus: 0.5, cpuWeight: 25 });
    try {
      const dirs = group.procsFiles.map((f) => join(f, '..'));
      if (cgroups.version === 1) {
        const memory = dirs.find((d) => d.includes('/memory/'))!;
        expect(await read(memory, 'memory.limit_in_bytes')).toBe(String(128 * MiB));
        if (existsSync(join(memory, 'memory.memsw.limit_in_bytes'))) expect(await read(memory, 'memory.memsw.limit_in_bytes')).toBe(String(128 * MiB));
        expect(
          await read(
            dirs.find((d) => d.includes('/pids/'))!,
            'pids.max',
          ),
        ).toBe('32');
        expect(
          await read(
            dirs.find((d) => d.includes('/cpu/'))!,
            'cpu.cfs_quota_us',
          ),
        ).toBe('50000');
        expect(
          await read(
            dirs.find((d) => d.includes('/cpu/'))!,
            'cpu.shares',
          ),
        ).toBe('256');
      } else {
        expect(await read(dirs[0]!, 'memory.max')).toBe(String(128 * MiB));
        expect(await read(dirs[0]!, 'pids.max')).toBe('32');
        expect(await read(dirs[0]!, 'cpu.max')).toBe('50000 100000');
        expect(await read(dirs[0]!, 'cpu.weight')).toBe('25');
      }
    } finally {
      await group.remove();
    }
  });

  it('stats: peak memory, CPU time, tasks, and the limits a process ran into', async () => {
    const group = await cgroups.create('stats', { memoryBytes: 96 * MiB, pids: 16, cpus: 1 });
    // 160 MiB in a 96 MiB cgroup, busy for a moment (1–2 s of wall time: until the second after
    // next; "+ 1" could be a few milliseconds), then more forks than pids.max allows.
    const run = inside(
      group.procsFiles,
      `
      node -e "const a = []; for (let i = 0; i < 10; i++) a.push(Buffer.alloc(16 * 1024 * 1024, 1)); console.log('held')"
      echo "node: $?"
      end=$(( $(date +%s) + 2 )); while [ $(date +%s) -lt $end ]; do :; done
      (i=0; while [ $i -lt 40 ]; do sleep 5 & i=$((i + 1)); done) 2>/dev/null || true`,
    );
    expect(await run.exited).toBe(0);
    expect(run.output()).toMatch(/node: (137|1)/);
    const stats = await group.stats();
    expect(stats.oomKills).toBeGreaterThan(0);
    expect(stats.memoryPeakBytes).toBeGreaterThan(64 * MiB);
    expect(stats.memoryPeakBytes).toBeLessThanOrEqual(96 * MiB);
    expect(stats.pidsLimitHits).toBeGreaterThan(0);
    expect(stats.cpuSeconds).toBeGreaterThan(0.3);
    if (stats.tasksPeak !== null) expect(stats.tasksPeak).toBeLessThanOrEqual(16);
    expect(await group.killAll()).toBe(0);
    await group.remove();
  });

  it('killAll takes everything inside, setsid and double forks included; remove() then leaves nothing', async () => {
    const group = await cgroups.create('kill', { memoryBytes: 128 * MiB, pids: 64, cpus: 1 });
    const run = inside(group.procsFiles, 'setsid sleep 600 & (setsid sh -c "sleep 600 & sleep 600" &) ; sleep 600');
    await waitFor(async () => ((await group.pids()).length >= 4 ? true : undefined), { timeoutMs: 5000, what: 'the sleepers to start' });
    expect(await group.killAll()).toBe(0);
    expect(await group.pids()).toEqual([]);
    await run.exited;
    await group.remove();
    for (const file of group.procsFiles) expect(existsSync(file)).toBe(false);
  });

  it('the entry shell refuses to run anything when it cannot join its cgroup', async () => {
    const run = inside(['/nonexistent/cgroup.procs'], 'echo ran');
    expect(await run.exited).toBe(125);
    expect(run.output()).toBe('');
  });

  it('sweep removes the children a dead worker left with whatever still runs in them (setsid included), and nothing else', async () => {
    const left = await cgroups.create('step-1-left', { memoryBytes: 64 * MiB, pids: 8, cpus: 1 });
    const survivor = await cgroups.create('step-2-survivor', { memoryBytes: 64 * MiB, pids: 8, cpus: 1 });
    const other = await cgroups.create('other-busy', { memoryBytes: 64 * MiB, pids: 8, cpus: 1 });
    const escaped = inside(survivor.procsFiles, 'setsid sleep 600 & sleep 600');
    const kept = inside(other.procsFiles, 'sleep 600');
    await waitFor(async () => ((await survivor.pids()).length >= 2 && (await other.pids()).length > 0 ? true : undefined), {
      timeoutMs: 5000,
      what: 'the sleepers',
    });
    expect(await cgroups.sweep((name) => name.startsWith('step-'))).toBeGreaterThanOrEqual(2);
    for (const file of [...left.procsFiles, ...survivor.procsFiles]) expect(existsSync(file)).toBe(false);
    await escaped.exited;
    for (const file of other.procsFiles) expect(existsSync(file)).toBe(true);
    expect((await other.pids()).length).toBeGreaterThan(0);
    await other.killAll();
    await kept.exited;
    await other.remove();
  });
});
