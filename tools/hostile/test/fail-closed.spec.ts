/**
 * Fail closed: a second platform whose PATH starts with a `bwrap` that cannot create namespaces
 * (it prints what a real one prints in a locked-down container and exits 1). A build and a Node
 * app must both fail with `sandbox_unavailable`, and the build must not have run at all: it
 * would leave a marker in a directory only an unsandboxed build can reach.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectNone } from './support/evidence.js';
import { HOSTILE_FIXTURES, fixtureCopy } from './support/host.js';
import { HostilePlatform, type Task } from './support/platform.js';

/**
 * A `bwrap` that works (it runs the real one) until `flag` exists, then fails as a real one does
 * where user namespaces are not allowed: the platform starts with a working sandbox (its
 * preflight would otherwise stop it, which the last test checks), then loses it.
 */
function fakeBwrap(real: string, flag: string): string {
  return `#!/bin/sh
if [ -e '${flag}' ]; then
  echo "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2
  exit 1
fi
exec '${real}' "$@"
`;
}

function realBwrap(except: string): string {
  for (const dir of (process.env['PATH'] ?? '').split(':')) {
    if (dir && dir !== except && existsSync(join(dir, 'bwrap'))) return join(dir, 'bwrap');
  }
  throw new Error('bwrap is not installed');
}

function outcome(task: Task): unknown {
  return { status: task.status, error: task.error, hazards: task.hazards?.map((h) => h.code), steps: task.steps?.map((s) => [s.name, s.status]) };
}

function refused(label: string, task: Task): string[] {
  if (task.status === 'failed' && task.error?.code === 'sandbox_unavailable') {
    return /bwrap|namespace|sandbox/i.test(task.error.message ?? '')
      ? []
      : [`${label}: sandbox_unavailable without saying what is wrong: "${task.error.message}"`];
  }
  return [
    `${label}: deploy ${task.status}${task.error ? ` with ${task.error.code}: ${task.error.message}` : ''} (expected failed, sandbox_unavailable); hazards: ${(task.hazards ?? []).map((h) => h.code).join(', ') || 'none'}`,
  ];
}

describe('with bwrap unable to create namespaces', () => {
  let platform: HostilePlatform | undefined;
  let fakeBin: string;
  let markers: string;
  let flag: string;
  const cleanup: string[] = [];

  beforeAll(async () => {
    fakeBin = await mkdtemp(join(tmpdir(), 'slipway-hostile-fakebin-'));
    markers = await mkdtemp(join(tmpdir(), 'slipway-hostile-markers-'));
    cleanup.push(fakeBin, markers);
    flag = join(fakeBin, 'namespaces-gone');
    await writeFile(join(fakeBin, 'bwrap'), fakeBwrap(realBwrap(fakeBin), flag));
    await chmod(join(fakeBin, 'bwrap'), 0o755);
    await chmod(fakeBin, 0o755);
    await chmod(markers, 0o777); // any build user could write here, if it ran unsandboxed
    platform = await HostilePlatform.start('failclosed', { pathPrefix: fakeBin });
    // From here on, bwrap cannot create namespaces.
    await writeFile(flag, '');
  }, 240_000);

  afterAll(async () => {
    await platform?.stop();
    await Promise.all(cleanup.map((dir) => rm(dir, { recursive: true, force: true })));
  }, 60_000);

  it('fails a build with sandbox_unavailable, and runs none of it', async () => {
    const account = await platform!.bootstrap('failclosed-build@hostile.example', 'Fail Closed Build');
    const marker = join(markers, `ran-${randomBytes(6).toString('hex')}`);
    const dir = await fixtureCopy('static-build', { 'marker.txt': marker });
    cleanup.push(dir);
    const task = await platform!.deploy(account, dir);
    const violations = refused('build', task);
    const left = await readdir(markers);
    if (left.length) violations.push(`build: the build ran without a sandbox and left ${left.join(', ')} in ${markers}`);
    expectNone('a build ran without its sandbox', violations, outcome(task));
  });

  it('fails a Node app with nothing to build with sandbox_unavailable instead of running it unsandboxed', async () => {
    const account = await platform!.bootstrap('failclosed-app@hostile.example', 'Fail Closed App');
    const task = await platform!.deploy(account, join(HOSTILE_FIXTURES, 'plain-node'));
    const violations = refused('app', task);
    if (task.status === 'succeeded') {
      const served = await platform!.viaEdge(account.slug, '/');
      violations.push(`app: it is live and says "${served.body.trim()}"`);
    }
    expectNone('an app ran without its sandbox', violations, outcome(task));
  });

  it('does not even start (one line saying how to fix the machine) when the sandbox cannot be made at start', async () => {
    const error = await HostilePlatform.start('failclosed-boot', { pathPrefix: fakeBin }).then(
      async (started) => {
        await started.stop();
        return null;
      },
      (e: Error) => e,
    );
    expect(error?.message ?? 'the platform started').toMatch(/sandbox cannot be made[^\n]*sysctl/);
  }, 240_000);
});
