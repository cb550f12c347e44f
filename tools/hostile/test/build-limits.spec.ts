/**
 * Build limits, from the tenant's position: a platform as `pnpm start` runs it (two build slots,
 * WORKER_CONCURRENCY=2, so another owner's deploy can build while the attacker's does), with the
 * default build limits (2 GiB, 1 024 tasks, 1.5 CPUs, weight 25 per command). The attacker's
 * `build` scripts touch 3 GiB, fork towards 2 000 processes, and leave eight `setsid` busy loops
 * behind while a victim tenant's app is requested in a loop, the victim switches sign-in on, signs
 * a user up and deploys. Every loop is bounded in the fixtures (count and time) and here.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@slipway/testing';
import { expectNone } from './support/evidence.js';
import { HOSTILE_FIXTURES, fixtureCopy } from './support/host.js';
import { HostilePlatform, type Account, type Task } from './support/platform.js';

/** Host pids whose command line holds `marker` (the test is root: it sees every process). */
function holding(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'latin1').includes(marker)) found.push(Number(name));
    } catch {
      /* gone */
    }
  }
  return found;
}

/** The v1 `cpu` (or v2) cgroup a process is in, and the CPU cap on it or on its parent (in CPUs), as the host sees it. */
function cpuCgroupOf(pid: number): { path: string; capCpus: number | null } | null {
  try {
    const lines = readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n');
    const v1 = lines.find((l) => /^\d+:([^:]*,)?cpu(,[^:]*)?:/.test(l));
    const path = (v1 ?? lines.find((l) => l.startsWith('0::')))?.split(':')[2];
    if (!path) return null;
    const dir = v1 ? join('/sys/fs/cgroup/cpu', path) : join('/sys/fs/cgroup', path);
    const caps: number[] = [];
    for (const d of [dir, join(dir, '..')]) {
      try {
        if (v1) {
          const quota = Number(readFileSync(join(d, 'cpu.cfs_quota_us'), 'utf8'));
          const period = Number(readFileSync(join(d, 'cpu.cfs_period_us'), 'utf8'));
          if (quota > 0) caps.push(quota / period);
        } else {
          const [quota, period] = readFileSync(join(d, 'cpu.max'), 'utf8').trim().split(' ');
          if (quota !== 'max') caps.push(Number(quota) / Number(period));
        }
      } catch {
        /* no such file */
      }
    }
    return { path, capCpus: caps.length ? Math.min(...caps) : null };
  } catch {
    return null;
  }
}

function outcome(task: Task): unknown {
  return {
    status: task.status,
    error: task.error,
    warnings: task.warnings?.map((w) => w.code),
    steps: task.steps?.map((s) => [s.name, s.status, s.log?.slice(-600)]),
    buildResources: task.spec?.['buildResources'],
  };
}

describe("build limits (a tenant's build against the machine)", () => {
  let platform: HostilePlatform | undefined;
  let attacker: Account;
  const cleanup: string[] = [];

  beforeAll(async () => {
    platform = await HostilePlatform.start('build-limits', { env: { WORKER_CONCURRENCY: '2' } });
    attacker = await platform.bootstrap('builder@hostile.example', 'Greedy Builder');
  }, 300_000);

  afterAll(async () => {
    await platform?.stop();
    await Promise.all(cleanup.map((dir) => rm(dir, { recursive: true, force: true })));
  }, 90_000);

  it('a build that touches 3 GiB fails with build_memory_exceeded, saying what it used', async () => {
    const task = await platform!.deploy(attacker, join(HOSTILE_FIXTURES, 'build-balloon'));
    const violations: string[] = [];
    if (task.status !== 'failed' || task.error?.code !== 'build_memory_exceeded')
      violations.push(`deploy ${task.status} with ${task.error?.code ?? 'no error'} (expected failed, build_memory_exceeded)`);
    else if (!/memory/.test(task.error.message ?? '')) violations.push(`the message does not say memory: ${task.error.message}`);
    const build = task.steps?.find((s) => s.name === 'build');
    if (!/resources: peak memory [\d.]+ (MiB|GiB) of 2\.00 GiB/.test(build?.log ?? ''))
      violations.push('the build step log does not say the peak memory against the 2 GiB limit');
    expectNone('a 3 GiB build was not stopped by its memory limit', violations, outcome(task));
  }, 240_000);

  it('a build that forks towards 2 000 processes fails with build_too_many_processes', async () => {
    const task = await platform!.deploy(attacker, join(HOSTILE_FIXTURES, 'build-forkloop'));
    const violations: string[] = [];
    if (task.status !== 'failed' || task.error?.code !== 'build_too_many_processes')
      violations.push(`deploy ${task.status} with ${task.error?.code ?? 'no error'} (expected failed, build_too_many_processes)`);
    const started = /started (\d+)/.exec(task.steps?.find((s) => s.name === 'build')?.log ?? '');
    if (started && Number(started[1]) >= 1024) violations.push(`the build started ${started[1]} processes (limit 1 024 tasks)`);
    expectNone('a fork loop in a build was not stopped by its process limit', violations, outcome(task));
  }, 240_000);

  it('eight setsid CPU burners: held in the build cgroup, dead with the step; the victim app, sign-up and deploy all work meanwhile', async () => {
    const victim = await platform!.bootstrap('victim@hostile.example', 'Patient Victim');
    const victimDir = await fixtureCopy('victim', {}, { 'package.json': ['VICTIM_VERSION', 'v1'] });
    cleanup.push(victimDir);
    const first = await platform!.deploy(victim, victimDir);
    if (first.status !== 'succeeded') throw new Error(`the victim did not deploy: ${JSON.stringify(outcome(first))}`);
    await waitFor(async () => ((await platform!.viaEdge(victim.slug, '/')).body.includes('victim v1') ? true : undefined), {
      timeoutMs: 30_000,
      what: 'the victim to serve v1',
    });

    const marker = `burner-${randomBytes(8).toString('hex')}`;
    const attackDir = await fixtureCopy('build-burners', {}, { 'package.json': ['BURNER_MARKER', marker] });
    cleanup.push(attackDir);
    const attack = platform!.deploy(attacker, attackDir);
    const burners = await waitFor(() => (holding(marker).length >= 8 ? holding(marker) : undefined), { timeoutMs: 120_000, what: 'the eight burners to run' });
    const violations: string[] = [];
    const cores = cpus().length;
    for (const pid of burners) {
      const group = cpuCgroupOf(pid);
      if (!group?.path.includes('/slipway-builds/')) violations.push(`burner ${pid} is not in a build cgroup (cpu cgroup ${group?.path ?? 'unknown'})`);
      else if (group.capCpus === null || group.capCpus >= cores)
        violations.push(`burner ${pid}'s cgroup ${group.path} has no CPU cap below the machine's ${cores} cores (${group.capCpus ?? 'none'})`);
    }

    // While they burn: the victim's app in a loop, its sign-in switched on and a sign-up, and a deploy.
    let requests = 0;
    const failures: string[] = [];
    let burning = true;
    const loop = (async () => {
      const end = Date.now() + 150_000;
      while (burning && Date.now() < end && requests < 5000) {
        requests++;
        const response = await platform!.viaEdge(victim.slug, '/', 5000).catch((e: Error) => ({ status: 0, body: e.message }));
        if (response.status !== 200 || !response.body.includes('victim'))
          failures.push(`request ${requests}: ${response.status} ${response.body.slice(0, 100)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const stillBurning = () => holding(marker).length > 0;
    await platform!.enableSignIn(victim);
    const signUp = await platform!.signUp(victim, 'patient@victim.example');
    if (signUp.status !== 200) violations.push(`the victim's sign-up answered ${signUp.status}: ${signUp.body}`);
    const signUpDuringAttack = stillBurning();
    const victimDir2 = await fixtureCopy('victim', {}, { 'package.json': ['VICTIM_VERSION', 'v2'] });
    cleanup.push(victimDir2);
    const second = await platform!.deploy(victim, victimDir2);
    if (second.status !== 'succeeded') violations.push(`the victim's deploy during the attack ${second.status}: ${JSON.stringify(second.error)}`);
    const deployDuringAttack = stillBurning();

    const attackTask = await attack;
    burning = false;
    await loop;
    if (attackTask.status !== 'succeeded')
      violations.push(`the burners' build itself ${attackTask.status} (${attackTask.error?.code}): it exits 0 and should deploy`);
    if (!/resources: peak memory .*CPU [\d.]+ s/.test(attackTask.steps?.find((s) => s.name === 'build')?.log ?? ''))
      violations.push("the attacker's build log does not say what it used");
    const survivors = await waitFor(() => (holding(marker).length === 0 ? [] : undefined), { timeoutMs: 10_000, what: 'the burners to be gone' }).catch(() =>
      holding(marker),
    );
    if (survivors.length) violations.push(`${survivors.length} burners outlived their build step (pids ${survivors.join(', ')})`);
    if (failures.length) violations.push(`${failures.length} of ${requests} victim requests failed: ${failures.slice(0, 5).join('; ')}`);
    if (requests < 10) violations.push(`only ${requests} victim requests were made during the attack`);
    expectNone("a build's setsid CPU burners hurt another tenant or outlived the build", violations, {
      requests,
      signUpDuringAttack,
      deployDuringAttack,
      attack: outcome(attackTask),
      victimDeploy: outcome(second),
    });
    // Said, not asserted: whether the victim's sign-up and deploy finished while the burners still ran.
    console.log(
      `build-limits: ${requests} victim requests during the attack, all answered; sign-up ${signUpDuringAttack ? 'during' : 'after'} the burn, victim deploy finished ${deployDuringAttack ? 'during' : 'after'} it`,
    );
  }, 420_000);
});
