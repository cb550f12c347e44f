import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxUnavailableError, explainSandboxFailure } from '@slipway/sandbox';
import { waitFor } from '@slipway/testing';
import { Sandbox } from './sandbox.js';
import { SandboxProvider } from './sandbox-provider.js';

const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/tmp' };
const limits = { timeoutMs: 20_000, outputLimitBytes: 1024 * 1024 };
const PATH = process.env['PATH'] ?? '/usr/bin:/bin';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A shell command printing `<target> CONNECTED` or `<target> <error code>` for each host:port. */
function connectEach(targets: string[]): string {
  const script = `for (const t of process.argv.slice(1)) { const i = t.lastIndexOf(':'); await new Promise((done) => { const s = require('net').connect(Number(t.slice(i + 1)), t.slice(0, i).replace(/^\\[|\\]$/g, '')); s.setTimeout(8000, () => { console.log(t, 'TIMEOUT'); s.destroy(); done(); }); s.on('connect', () => { console.log(t, 'CONNECTED'); s.destroy(); done(); }); s.on('error', (e) => { console.log(t, e.code); done(); }); }); }`;
  return `node -e "(async () => { ${script.replace(/"/g, '\\"')} })()" ${targets.join(' ')}`;
}

describe('build sandbox (real pasta + bubblewrap)', () => {
  let root: string;
  let workspace: string;
  let sandbox: Sandbox;
  let listener: Server;
  let listenerPort: number;
  let accepted = 0;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'sandbox-spec-'));
    await chmod(root, 0o755);
    sandbox = await new SandboxProvider({ setting: 'on', buildUser: 'slipway-build', workspacesDir: join(root, 'workspaces'), path: PATH }).acquire();
    if (sandbox.mode.kind !== 'bwrap') throw new Error('expected a sandbox');
    workspace = join(root, 'workspaces', 'w1');
    await mkdir(workspace, { recursive: true });
    execFileSync('chown', [`${sandbox.mode.uid}:${sandbox.mode.gid}`, workspace]);
    // Stands in for the platform's own ports on the host's loopback.
    listener = createServer((socket) => {
      accepted++;
      socket.end('platform\n');
    });
    // On every address, as a careless service would listen.
    await new Promise<void>((resolve) => listener.listen(0, '0.0.0.0', resolve));
    listenerPort = (listener.address() as { port: number }).port;
  });
  afterAll(async () => {
    listener.close();
    await rm(root, { recursive: true, force: true });
  });

  it('runs as an unprivileged user with a clean environment and only its workspace', async () => {
    await writeFile(join(root, 'platform-secret.txt'), 'platform file');
    const result = await sandbox.run({
      workspace,
      env,
      ...limits,
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

  it('reaches the outside world (the npm registry) but nothing on the host: Redis, Postgres, platform ports', async () => {
    // The host's own address (pasta gives the sandbox a copy of it, so it is the sandbox's own).
    const hostAddress = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
    const hostPorts = [
      '127.0.0.1:6379',
      '127.0.0.1:5432',
      `127.0.0.1:${listenerPort}`,
      '[::1]:6379',
      `localhost:${listenerPort}`,
      ...(hostAddress ? [`${hostAddress}:${listenerPort}`] : []),
    ];
    const result = await sandbox.run({ workspace, env, ...limits, command: connectEach([...hostPorts, 'registry.npmjs.org:443']) });
    expect(result.exitCode).toBe(0);
    for (const target of hostPorts)
      expect(result.output).toMatch(new RegExp(`^${target.replace(/[.[\]]/g, '\\$&')} (ECONNREFUSED|ENETUNREACH|EADDRNOTAVAIL)$`, 'm'));
    expect(result.output).toMatch(/^registry\.npmjs\.org:443 CONNECTED$/m);
    expect(accepted).toBe(0);
  });

  it('kills the whole process tree on timeout', async () => {
    const result = await sandbox.run({ workspace, env, timeoutMs: 1500, outputLimitBytes: 1024, command: 'sleep 3017 & sleep 3017' });
    expect(result).toMatchObject({ timedOut: true, exitCode: null });
    const left = () => execFileSync('sh', ['-c', 'pgrep -f "sleep 301[7]" || true'], { encoding: 'utf8' }).trim();
    await waitFor(() => left() === '', { timeoutMs: 5000, what: 'every process of the sandbox to be gone' });
    expect(left()).toBe('');
  });

  it('stops a command that prints more than the output limit', async () => {
    const result = await sandbox.run({ workspace, env, timeoutMs: 20_000, outputLimitBytes: 64 * 1024, command: 'yes slipway' });
    expect(result.outputExceeded).toBe(true);
    expect(result.exitCode).not.toBe(0);
  });
});

describe('fails closed', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sandbox-closed-'));
    await chmod(dir, 0o755);
    await mkdir(join(dir, 'bin'), { mode: 0o755 });
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a bwrap that cannot create namespaces: SandboxUnavailableError with the fix, and the next acquire probes again', async () => {
    const bwrap = join(dir, 'bin', 'bwrap');
    await writeFile(
      bwrap,
      '#!/bin/sh\necho "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2\nexit 1\n',
      { mode: 0o755 },
    );
    const provider = new SandboxProvider({
      setting: 'on',
      buildUser: 'slipway-build',
      workspacesDir: join(dir, 'workspaces'),
      path: `${join(dir, 'bin')}:${PATH}`,
    });
    expect(provider.unsandboxedReason).toBeNull();
    const error = await provider.acquire().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxUnavailableError);
    expect((error as SandboxUnavailableError).code).toBe('sandbox_unavailable');
    expect((error as Error).message).toMatch(/cannot create namespaces.*No permissions to create new namespace.*sysctl -w .*user\.max_user_namespaces/);
    // The operator fixes the machine; the worker notices without a restart.
    await writeFile(bwrap, '#!/bin/sh\nexec /usr/bin/bwrap "$@"\n', { mode: 0o755 });
    expect((await provider.acquire()).mode).toMatchObject({ kind: 'bwrap', uid: expect.any(Number) });
  });

  it('pasta unable to open /dev/net/tun (mode 0600): the hint is the chmod', () => {
    // What pasta (Debian 12's passt) printed here as an unprivileged user with /dev/net/tun bind-mounted over by a 0600 node.
    expect(explainSandboxFailure('Failed to send 45 bytes to syslog\nFailed to open tun socket in namespace\n')).toBe(
      '/dev/net/tun cannot be opened by an unprivileged user (pasta needs it): run `chmod 0666 /dev/net/tun`',
    );
  });

  it('without pasta or bwrap on PATH, says which package to install', async () => {
    const provider = new SandboxProvider({ setting: 'on', buildUser: 'slipway-build', workspacesDir: join(dir, 'workspaces'), path: join(dir, 'empty') });
    await expect(provider.acquire()).rejects.toThrow(/pasta is not installed: run `apt-get install -y passt`/);
    const onlyPasta = join(dir, 'only-pasta');
    await mkdir(onlyPasta, { mode: 0o755 });
    execFileSync('ln', ['-s', '/usr/bin/pasta', join(onlyPasta, 'pasta')]);
    await expect(
      new SandboxProvider({ setting: 'on', buildUser: 'slipway-build', workspacesDir: join(dir, 'workspaces'), path: onlyPasta }).acquire(),
    ).rejects.toThrow(/apt-get install -y bubblewrap/);
  });
});

describe('BUILD_SANDBOX=off (the operator said so)', () => {
  it('runs in its own process group, says why, and the group is killed on timeout', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nosandbox-'));
    const provider = new SandboxProvider({ setting: 'off', buildUser: 'slipway-build', workspacesDir: join(dir, 'w'), path: PATH });
    expect(provider.unsandboxedReason).toContain('BUILD_SANDBOX=off');
    const sandbox = await provider.acquire();
    expect(sandbox.mode).toEqual({ kind: 'none', reason: expect.stringContaining('BUILD_SANDBOX=off') });
    const result = await sandbox.run({ workspace: dir, env, timeoutMs: 1500, outputLimitBytes: 1024, command: 'sleep 300 & echo $! > child.pid; sleep 300' });
    expect(result.timedOut).toBe(true);
    const pid = Number(await readFile(join(dir, 'child.pid'), 'utf8'));
    await waitFor(() => !alive(pid), { timeoutMs: 5000, what: 'the background child to be killed' });
    expect(alive(pid)).toBe(false);
    await rm(dir, { recursive: true, force: true });
  });
});
