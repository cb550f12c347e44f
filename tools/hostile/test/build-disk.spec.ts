/**
 * Issue 27, "a 6 GiB workspace": a tenant's build writes 6 GiB of zeros into its workspace, on
 * the file system that holds the platform's own data (Postgres, blobs: SLIPWAY_HOME). Each build
 * has a fixed-size disk of its own (BUILD_DISK_MB; 512 MiB here for speed, the attack is 12× that),
 * so the kernel stops the build at its budget: the deploy fails with `build_disk_exceeded`, the
 * host never loses more than the budget, the space is back within a minute of the deploy's end (no mount,
 * no image left), and another tenant's deploy and sign-up succeed meanwhile.
 */
import { readFileSync } from 'node:fs';
import { readdir, rm, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { expectNone } from './support/evidence.js';
import { HOSTILE_FIXTURES, fixtureCopy } from './support/host.js';
import { HostilePlatform, type Task } from './support/platform.js';

const MiB = 1024 * 1024;
const BUDGET_MB = 512;
/** What the attack writes unhindered. */
const ATTACK_BYTES = 6 * 1024 * MiB;
/** Others share this machine's disk (other suites, other builds): room for their writes. */
const MARGIN = 1536 * MiB;

async function hostFree(path: string): Promise<number> {
  const info = await statfs(path);
  return info.bavail * info.bsize;
}

/** Lines of /proc/mounts with a mount point under `dir`. */
function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .filter((line) => line.split(' ')[1]?.startsWith(`${dir}/`));
}

function outcome(task: Task): unknown {
  return {
    status: task.status,
    error: task.error,
    hazards: task.hazards?.map((h) => h.code),
    steps: task.steps?.map((s) => [s.name, s.status, (s.log ?? '').slice(-600)]),
  };
}

describe('a build that writes 6 GiB into its workspace', () => {
  let platform: HostilePlatform | undefined;
  const cleanup: string[] = [];

  beforeAll(async () => {
    if (process.getuid?.() !== 0) throw new Error('the build-disk attack needs the platform as `pnpm start` runs it as root here (loop mounts)');
    platform = await HostilePlatform.start('build-disk', { env: { BUILD_DISK_MB: String(BUDGET_MB) } });
  }, 240_000);

  afterAll(async () => {
    await platform?.stop();
    await Promise.all(cleanup.map((dir) => rm(dir, { recursive: true, force: true })));
  }, 90_000);

  it('is stopped at its budget with build_disk_exceeded, the space comes back, and a victim deploys and signs up meanwhile', async () => {
    const p = platform!;
    const attacker = await p.bootstrap('disk-attacker@hostile.example', 'Disk Filler');
    const victim = await p.bootstrap('disk-victim@hostile.example', 'Disk Victim');
    await p.enableSignIn(victim);
    const source = await fixtureCopy('disk-filler');
    cleanup.push(source);

    const before = await hostFree(p.home);
    let lowest = before;
    let sampling = true;
    const sampler = (async () => {
      for (let i = 0; sampling && i < 20_000; i++) {
        lowest = Math.min(lowest, await hostFree(p.home));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();

    const attack = p.deploy(attacker, source);
    // Meanwhile, another tenant: a deploy and a sign-up of one of its users.
    const victimDeploy = p.deploy(victim, join(HOSTILE_FIXTURES, 'static-site'));
    const signUp = await p.signUp(victim, 'visitor@victim.example');
    const [task, victimTask] = await Promise.all([attack, victimDeploy]);
    // The disk is released in the background as the deployment ends (unmounting writes its dirty pages back first).
    const imagesDir = join(p.home, 'build', 'disks');
    for (let i = 0; i < 120 && (mountsUnder(p.home).length || (await readdir(imagesDir).catch(() => [])).length); i++)
      await new Promise((resolve) => setTimeout(resolve, 500));
    sampling = false;
    await sampler;
    const after = await hostFree(p.home);

    const violations: string[] = [];
    if (task.status !== 'failed' || task.error?.code !== 'build_disk_exceeded') {
      violations.push(
        `the attack's deploy ${task.status}${task.error ? ` with ${task.error.code}: ${task.error.message}` : ''} (expected failed, build_disk_exceeded)`,
      );
    } else if (!new RegExp(`of the ${BUDGET_MB} MiB a build may use`).test(task.error.message ?? '') || !/it wrote \d+/.test(task.error.message ?? '')) {
      violations.push(`build_disk_exceeded does not say the budget and what was written: "${task.error.message}"`);
    }
    const buildLog = task.steps?.find((s) => s.name === 'build')?.log ?? '';
    if (!/build disk: \d+ MiB used of 512 MiB \(peak \d+ MiB\)/.test(buildLog))
      violations.push("the build step's log does not say how much disk the build used");
    const drop = before - lowest;
    if (drop > BUDGET_MB * MiB + MARGIN)
      violations.push(
        `the host's free space dropped by ${Math.round(drop / MiB)} MiB during the attack (budget ${BUDGET_MB} MiB; the attack writes ${ATTACK_BYTES / MiB} MiB)`,
      );
    if (after < before - MARGIN)
      violations.push(`the space did not come back: ${Math.round((before - after) / MiB)} MiB less free after the deploy than before`);
    const left = mountsUnder(p.home);
    if (left.length) violations.push(`mounts left behind: ${left.join('; ')}`);
    const images = await readdir(imagesDir).catch(() => []);
    if (images.length) violations.push(`disk images left behind: ${images.join(', ')}`);
    if (victimTask.status !== 'succeeded') violations.push(`the victim's deploy ${victimTask.status}: ${JSON.stringify(victimTask.error)}`);
    if (signUp.status !== 200) violations.push(`the victim's sign-up answered ${signUp.status}: ${signUp.body}`);
    expectNone("a build filled the platform's disk", violations, {
      attack: outcome(task),
      victim: outcome(victimTask),
      freeMiB: { before: before / MiB, lowest: lowest / MiB, after: after / MiB },
    });
  }, 600_000);
});
