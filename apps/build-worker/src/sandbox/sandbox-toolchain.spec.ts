import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LIMITS } from '@slipway/contract';
import { NodeToolchains, NpmRegistry, TOOLCHAIN_BIN, type NodeToolchain } from '@slipway/toolchains';
import { Sandbox } from './sandbox.js';
import { SandboxProvider } from './sandbox-provider.js';

/** The machine cache the libs/toolchains tests fill (real downloads from the registry). */
const CACHE = process.env['SLIPWAY_TEST_TOOLCHAINS'] ?? '/tmp/slipway-toolchains-test';
const PATH = process.env['PATH'] ?? '/usr/bin:/bin';

describe('build sandbox with a project Node.js toolchain (real pasta + bubblewrap, real registry)', () => {
  let root: string;
  let workspace: string;
  let sandbox: Sandbox;
  let node22: NodeToolchain;

  beforeAll(async () => {
    await mkdir(CACHE, { recursive: true, mode: 0o755 });
    const toolchains = new NodeToolchains({ root: CACHE, registry: new NpmRegistry({ downloadTimeoutMs: 180_000 }), supported: LIMITS.node.supportedMajors });
    node22 = (await toolchains.ensure((await toolchains.resolve({ value: 'lts/jod', source: '.nvmrc' })).version))!;
    root = await mkdtemp(join(tmpdir(), 'sandbox-toolchain-'));
    await chmod(root, 0o755);
    sandbox = await new SandboxProvider({ setting: 'on', buildUser: 'slipway-build', workspacesDir: join(root, 'workspaces'), path: PATH }).acquire();
    if (sandbox.mode.kind !== 'bwrap') throw new Error('expected a sandbox');
    workspace = join(root, 'workspaces', 'w1');
    await mkdir(workspace, { recursive: true });
    execFileSync('chown', [`${sandbox.mode.uid}:${sandbox.mode.gid}`, workspace]);
  }, 400_000);

  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  const limits = { timeoutMs: 60_000, outputLimitBytes: 1024 * 1024 };

  it('runs node, npm and `#!/usr/bin/env node` scripts on the chosen Node, read-only', async () => {
    const env = { PATH: `${TOOLCHAIN_BIN}:/usr/local/bin:/usr/bin:/bin`, HOME: '/tmp', npm_config_update_notifier: 'false' };
    const command = [
      'node --version',
      'npm --version',
      'command -v node',
      'printf \'#!/usr/bin/env node\\nconsole.log("env-node", process.version)\\n\' > s.js && chmod +x s.js && ./s.js',
      'touch /opt/slipway/node/bin/x 2>/dev/null && echo WRITABLE || echo read-only',
      // Not only the files' owner (root) protects it: the mount itself is read-only.
      "grep ' /opt/slipway/node ' /proc/self/mountinfo | cut -d ' ' -f 6",
    ].join(' && ');
    const result = await sandbox.run({ workspace, command, env, toolchainDir: node22.dir, ...limits });
    expect(result.exitCode).toBe(0);
    const lines = result.output.trim().split('\n');
    expect(lines[0]).toBe(`v${node22.version}`);
    expect(lines[1]).toMatch(/^10\./);
    expect(lines[2]).toBe('/opt/slipway/node/bin/node');
    expect(lines[3]).toBe(`env-node v${node22.version}`);
    expect(lines[4]).toBe('read-only');
    expect(lines[5]).toMatch(/^ro(,|$)/);
  }, 120_000);

  it('without a toolchain the build runs on the platform Node (in /usr)', async () => {
    const result = await sandbox.run({
      workspace,
      command: 'node --version; command -v node; ls /opt 2>&1 | head -1',
      env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/tmp' },
      ...limits,
    });
    expect(result.output).toContain(process.version);
    expect(result.output).toContain('/usr/bin/node');
    expect(result.output).toMatch(/No such file or directory/);
  }, 60_000);

  it('has the system tools build scripts reach through Debian alternatives (awk; cc and c++ for native addons; which)', async () => {
    // Each tool is asked for only where the machine has it, so the test says what is missing inside, not outside.
    const tools = ['awk', 'cc', 'c++', 'which'].filter((t) => {
      try {
        execFileSync('sh', ['-c', `command -v ${t} && ${t} --version`], { stdio: 'ignore' });
        return true;
      } catch {
        return false;
      }
    });
    expect(tools).toContain('awk');
    const command = tools.map((t) => `${t} --version >/dev/null 2>&1 && echo "${t} ok" || echo "${t} missing"`).join('; ');
    const result = await sandbox.run({ workspace, command, env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/tmp' }, ...limits });
    expect(result.output.trim().split('\n')).toEqual(tools.map((t) => `${t} ok`));
  }, 60_000);
});
