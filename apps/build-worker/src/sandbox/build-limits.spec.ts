import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxUnavailableError } from '@slipway/sandbox';
import { waitFor } from '@slipway/testing';
import type { BuildLimitSettings } from './build-limits.js';
import type { Sandbox } from './sandbox.js';
import { SandboxProvider } from './sandbox-provider.js';

const PATH = process.env['PATH'] ?? '/usr/bin:/bin';
const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/tmp' };
const run = { timeoutMs: 60_000, outputLimitBytes: 1024 * 1024 };
const MiB = 1024 * 1024;
const ROOT = process.getuid?.() === 0;
/** A parent of this test's own, so the machine's other builds are not touched. */
const PARENT = `slipway-builds-spec-${process.pid}`;
const limits: BuildLimitSettings = { mode: 'cgroup', memoryBytes: 256 * MiB, pids: 64, cpus: 0.5, cpusTotal: 1, cpuWeight: 25, parent: PARENT };

/** Host processes whose command line holds `marker` (the test sees every process as root; pgrep's own shell does not count). */
function holding(marker: string): number[] {
  return (() => {
    try {
      return execFileSync('pgrep', ['-f', marker], { encoding: 'utf8' });
    } catch {
      return '';
    }
  })()
    .split('\n')
    .filter(Boolean)
    .map(Number);
}

/** This test's parent in each hierarchy that has it (v1: under this process's own cgroup per controller). */
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
  return ['memory', 'pids', 'cpu', 'cpuacct', ''].map((c) => join('/sys/fs/cgroup', c, own.get(c) ?? '/', PARENT)).filter((dir) => existsSync(dir));
}

/** Every child cgroup left under this test's parent. */
async function leftovers(): Promise<string[]> {
  const found: string[] = [];
  for (const parent of await parents())
    for (const entry of await readdir(parent, { withFileTypes: true })) if (entry.isDirectory()) found.push(join(parent, entry.name));
  return found;
}

(ROOT ? describe : describe.skip)(
  'build limits: a cgroup per command (real cgroups, pasta + bubblewrap, skipped unless root: only root can create cgroups)',
  () => {
    let root: string;
    let workspace: string;
    let sandbox: Sandbox;

    beforeAll(async () => {
      root = await mkdtemp(join(tmpdir(), 'build-limits-spec-'));
      await chmod(root, 0o755);
      sandbox = await new SandboxProvider({ setting: 'on', buildUser: 'slipway-build', workspacesDir: join(root, 'workspaces'), path: PATH, limits }).acquire();
      if (sandbox.mode.kind !== 'bwrap') throw new Error('expected a sandbox');
      workspace = join(root, 'workspaces', 'w1');
      await mkdir(workspace, { recursive: true });
      execFileSync('chown', [`${sandbox.mode.uid}:${sandbox.mode.gid}`, workspace]);
    });

    afterAll(async () => {
      if (root) await rm(root, { recursive: true, force: true });
      for (const dir of [...(await leftovers()), ...(await parents())]) await rmdir(dir).catch(() => undefined);
    });

    it('runs the command inside a cgroup of its own, and reports what it used', async () => {
      const result = await sandbox.run({
        workspace,
        env,
        ...run,
        command: `node -e "const b = Buffer.alloc(64 * 1024 * 1024, 1); let x = 0; const end = Date.now() + 300; while (Date.now() < end) x += b[x % b.length]; console.log('ok', x > 0)"`,
      });
      expect(result.output).toContain('ok true');
      expect(result.exitCode).toBe(0);
      expect(result.usage).toMatchObject({ memoryLimitBytes: 256 * MiB, tasksLimit: 64, oomKills: 0, pidsLimitHits: 0 });
      expect(result.usage!.memoryPeakBytes).toBeGreaterThan(64 * MiB);
      expect(result.usage!.cpuSeconds).toBeGreaterThan(0.1);
      expect(await leftovers()).toEqual([]);
    });

    it('memory beyond the limit: the kernel kills it (no swap), and the OOM kill is counted', async () => {
      const result = await sandbox.run({
        workspace,
        env,
        ...run,
        command: `node -e "const a = []; const end = Date.now() + 20000; for (let i = 0; i < 12 && Date.now() < end; i++) { a.push(Buffer.alloc(64 * 1024 * 1024, 1)); } console.log('held', a.length * 64, 'MiB')"`,
      });
      expect(result.output).not.toContain('held 768 MiB');
      expect(result.exitCode).not.toBe(0);
      expect(result.usage!.oomKills).toBeGreaterThan(0);
      expect(result.usage!.memoryPeakBytes).toBeGreaterThanOrEqual(200 * MiB);
      expect(result.usage!.memoryPeakBytes).toBeLessThanOrEqual(256 * MiB);
    });

    it('processes beyond the limit: forks are refused and counted', async () => {
      const result = await sandbox.run({ workspace, env, ...run, command: 'i=0; while [ $i -lt 200 ]; do sleep 30 & i=$((i + 1)); done; echo started $i' });
      expect(result.usage!.pidsLimitHits).toBeGreaterThan(0);
      expect(result.usage!.tasksPeak === null || result.usage!.tasksPeak <= 64).toBe(true);
      expect(result.output).not.toContain('started 200');
      expect(holding('sleep 3[0]')).toEqual([]);
    });

    it.each(['on', 'off'] as const)('setsid and double forks do not escape: everything dies with the command (BUILD_SANDBOX=%s)', async (setting) => {
      const marker = `burn-${setting}-${process.pid}-${Date.now()}`;
      // Busy loops in sessions of their own, one of them double-forked, bounded at 60 s; the command itself ends at once.
      const burner = `setsid node -e "const end = Date.now() + 60000; while (Date.now() < end) {}" ${marker} </dev/null >/dev/null 2>&1 &`;
      const command = `${Array.from({ length: 7 }, () => burner).join(' ')} (sh -c '${burner.replace(/"/g, '\\"')}' &) ; sleep 1; echo launched`;
      const where =
        setting === 'on'
          ? { sandbox, workspace }
          : {
              sandbox: await new SandboxProvider({ setting: 'off', buildUser: 'slipway-build', workspacesDir: join(root, 'w'), path: PATH, limits }).acquire(),
              workspace: root,
            };
      const result = await where.sandbox.run({ workspace: where.workspace, env, ...run, command });
      expect(result.output).toContain('launched');
      expect(result.exitCode).toBe(0);
      await waitFor(() => holding(marker).length === 0 || undefined, { timeoutMs: 5000, what: 'every burner to be gone' }).catch(() => undefined);
      expect(holding(marker)).toEqual([]);
      expect(await leftovers()).toEqual([]);
    });

    it('the CPU quota holds a busy command to its share', async () => {
      const started = Date.now();
      const result = await sandbox.run({
        workspace,
        env,
        ...run,
        command: 'for i in 1 2 3 4; do node -e "const end = Date.now() + 2000; while (Date.now() < end) {}" & done; wait; echo done',
      });
      const wallSeconds = (Date.now() - started) / 1000;
      expect(result.output).toContain('done');
      // Against the run's own wall time, not a fixed figure (on a loaded machine the throttled node
      // starts stretch it): 0.5 CPU allows half of it, plus a quota period's slack; four unbounded
      // busy processes would take up to min(4, cores) times it (8 CPU s over about 4 s on 2 cores).
      expect(result.usage!.cpuSeconds).toBeLessThan(0.5 * wallSeconds + 0.3);
    });

    it('under BUILD_SANDBOX=off the command is held in a cgroup too', async () => {
      const off = await new SandboxProvider({ setting: 'off', buildUser: 'slipway-build', workspacesDir: join(root, 'w'), path: PATH, limits }).acquire();
      const result = await off.run({ workspace: root, env, ...run, command: 'cat /proc/self/cgroup' });
      expect(result.output).toMatch(new RegExp(`(pids|memory)[^\\n]*/${PARENT}/step-${process.pid}-`));
    });
  },
);

(ROOT ? describe : describe.skip)('build limits fail closed (skipped unless root: only root can create cgroups)', () => {
  it('no cgroup can be made: SandboxUnavailableError saying how to fix it, and nothing runs', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'build-limits-closed-'));
    // A parent whose path goes through a file: mkdir fails as it would on a read-only /sys/fs/cgroup.
    const provider = new SandboxProvider({
      setting: 'on',
      buildUser: 'slipway-build',
      workspacesDir: join(dir, 'w'),
      path: PATH,
      limits: { ...limits, parent: 'cgroup.procs/builds' },
    });
    const error = await provider.acquire().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxUnavailableError);
    expect((error as Error).message).toMatch(/cannot be held in cgroups.*cannot create .*cgroup\.procs\/builds.*BUILD_LIMITS=rlimit/);
    await rm(dir, { recursive: true, force: true });
  });

  it('BUILD_LIMITS=rlimit (the operator said so): prlimit bounds processes and address space, nothing is measured', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'build-limits-rlimit-'));
    await chmod(dir, 0o755);
    const provider = new SandboxProvider({
      setting: 'on',
      buildUser: 'slipway-build',
      workspacesDir: join(dir, 'workspaces'),
      path: PATH,
      limits: { ...limits, mode: 'rlimit', memoryBytes: 1024 * MiB },
    });
    expect(provider.rlimitOnlyReason).toBe('BUILD_LIMITS=rlimit');
    const sandbox = await provider.acquire();
    const workspace = join(dir, 'workspaces', 'w');
    await mkdir(workspace, { recursive: true });
    if (sandbox.mode.kind === 'bwrap') execFileSync('chown', [`${sandbox.mode.uid}:${sandbox.mode.gid}`, workspace]);
    const result = await sandbox.run({ workspace, env, ...run, command: "grep -E '^Max (processes|address space)' /proc/self/limits" });
    expect(result.output).toMatch(/^Max processes\s+64\s+64\s/m);
    expect(result.output).toMatch(new RegExp(`^Max address space\\s+${1024 * MiB}\\s+${1024 * MiB}\\s`, 'm'));
    expect(result.usage).toBeNull();
    await rm(dir, { recursive: true, force: true });
  });
});
