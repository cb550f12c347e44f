import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@slipway/testing';
import { Sandbox } from './sandbox.js';
import { detectSandbox } from './sandbox-detect.js';

const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/tmp' };
const limits = { timeoutMs: 20_000, outputLimitBytes: 1024 * 1024 };

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('build sandbox (real bubblewrap)', () => {
  let root: string;
  let workspace: string;
  let sandbox: Sandbox;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'sandbox-spec-'));
    await chmod(root, 0o755);
    const mode = await detectSandbox('auto', 'slipway-build', join(root, 'workspaces'));
    if (mode.kind !== 'bwrap') throw new Error(`bwrap must work on this machine for this test: ${mode.reason}`);
    sandbox = new Sandbox(mode);
    workspace = join(root, 'workspaces', 'w1');
    await mkdir(workspace, { recursive: true });
    execFileSync('chown', [`${mode.uid}:${mode.gid}`, workspace]);
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('runs as an unprivileged user with a clean environment and only its workspace', async () => {
    await writeFile(join(root, 'platform-secret.txt'), 'platform file');
    const result = await sandbox.run({
      workspace, network: false, env, ...limits,
      command: `id -u; env | sort; ls / ; cat ${join(root, 'platform-secret.txt')} 2>&1; ls /work 2>&1; echo made > /workspace/out.txt; touch /usr/evil 2>&1; echo done`,
    });
    expect(result.exitCode).toBe(0);
    const lines = result.output.split('\n');
    expect(Number(lines[0])).toBeGreaterThan(0);
    expect(result.output).not.toMatch(/DATABASE_URL|SLIPWAY_MASTER_KEY|REDIS_URL/);
    expect(result.output).toContain('No such file or directory');
    expect(result.output).not.toContain('platform file');
    expect(result.output).toMatch(/touch: cannot touch '\/usr\/evil': Read-only file system/);
    expect(await readFile(join(workspace, 'out.txt'), 'utf8')).toBe('made\n');
  });

  it('has no network when not asked for (builds)', async () => {
    const result = await sandbox.run({ workspace, network: false, env, ...limits, command: `node -e "require('net').connect(6379, '127.0.0.1').on('connect', () => console.log('CONNECTED')).on('error', (e) => console.log('ERR', e.code))"` });
    expect(result.output).toMatch(/ERR (ENETUNREACH|ECONNREFUSED)/);
    expect(result.output).not.toContain('CONNECTED');
  });

  it('kills the whole process tree on timeout', async () => {
    const result = await sandbox.run({ workspace, network: false, env, timeoutMs: 1500, outputLimitBytes: 1024, command: 'sleep 300 & sleep 300' });
    expect(result).toMatchObject({ timedOut: true, exitCode: null });
  });

  it('stops a command that prints more than the output limit', async () => {
    const result = await sandbox.run({ workspace, network: false, env, timeoutMs: 20_000, outputLimitBytes: 64 * 1024, command: 'yes slipway' });
    expect(result.outputExceeded).toBe(true);
    expect(result.exitCode).not.toBe(0);
  });
});

describe('without a sandbox', () => {
  it('still runs, in its own process group, and the group is killed on timeout', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nosandbox-'));
    const sandbox = new Sandbox(await detectSandbox('off', 'slipway-build', join(dir, 'w')));
    expect(sandbox.mode).toEqual({ kind: 'none', reason: expect.stringContaining('BUILD_SANDBOX=off') });
    const result = await sandbox.run({ workspace: dir, network: false, env, timeoutMs: 1500, outputLimitBytes: 1024, command: 'sleep 300 & echo $! > child.pid; sleep 300' });
    expect(result.timedOut).toBe(true);
    const pid = Number(await readFile(join(dir, 'child.pid'), 'utf8'));
    await waitFor(() => !alive(pid), { timeoutMs: 5000, what: 'the background child to be killed' });
    expect(alive(pid)).toBe(false);
    await rm(dir, { recursive: true, force: true });
  });
});
