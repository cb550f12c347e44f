/**
 * A 1 GiB log burst (issue 27): a tenant's app writes 1 GiB to stdout as fast as its pipe takes
 * it (`yes | head -c 1G`, killed after FLOOD_SECONDS), while a victim tenant's app is requested
 * in a loop, the victim deploys and one of its users signs up. Afterwards the attacker's log on
 * disk is within the configured budget (a ring of RUNTIME_LOG_FILES × RUNTIME_LOG_MAX_BYTES),
 * the drop marker says what was dropped, every victim request succeeded, and the runtime
 * supervisor (which reads the app's pipes) spent little CPU: it stopped reading, so the app's
 * writes waited in its own cgroup. The supervisor's CPU seconds are printed either way.
 */
import { open, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { waitFor } from '@slipway/testing';
import { expectNone } from './support/evidence.js';
import { HOSTILE_FIXTURES } from './support/host.js';
import { HostilePlatform, type Account, type Task } from './support/platform.js';

const MIB = 1024 * 1024;
/** The budget this platform is given: small, so that the ring has to rotate within the test. */
const LOG_MAX_BYTES = MIB;
const LOG_FILES = 3;
const FLOOD_BYTES = 1024 * MIB;
const FLOOD_SECONDS = 20;

/** utime + stime of a process, seconds (/proc/<pid>/stat fields 14 and 15, in clock ticks of 1/100 s). */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function endOf(file: string, bytes: number): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const size = (await handle.stat()).size;
    const buffer = Buffer.alloc(Math.min(size, bytes));
    await handle.read(buffer, 0, buffer.length, size - buffer.length);
    return buffer.toString('utf8');
  } finally {
    await handle.close();
  }
}

function succeeded(task: Task, what: string): Task {
  if (task.status !== 'succeeded')
    throw new Error(`${what} did not deploy: ${JSON.stringify(task.error)} ${JSON.stringify(task.steps?.map((s) => [s.name, s.status]))}`);
  return task;
}

interface FloodStatus {
  running: boolean;
  exit: number | string | null;
  ms?: number;
}

describe('an app writing a 1 GiB burst to stdout', () => {
  let platform: HostilePlatform | undefined;
  let attacker: Account;
  let victim: Account;

  beforeAll(async () => {
    platform = await HostilePlatform.start('logbudget', { env: { RUNTIME_LOG_MAX_BYTES: String(LOG_MAX_BYTES), RUNTIME_LOG_FILES: String(LOG_FILES) } });
    attacker = await platform.bootstrap('flood@hostile.example', 'Log Flood');
    victim = await platform.bootstrap('victim@hostile.example', 'Log Victim');
    await platform.enableSignIn(victim);
    succeeded(await platform.deploy(attacker, join(HOSTILE_FIXTURES, 'log-flood')), 'the flooding app');
    succeeded(await platform.deploy(victim, join(HOSTILE_FIXTURES, 'plain-node')), 'the victim');
  }, 600_000);

  afterAll(async () => {
    await platform?.stop();
  }, 120_000);

  it('keeps its log within the budget, marks the drops, and costs the platform and the other tenants nothing', async () => {
    const p = platform!;
    const supervisor = await p.pid('runtime');
    const [{ live_release_id: release }] = await p.query<{ live_release_id: string }>('SELECT live_release_id FROM applications WHERE id = $1', [
      attacker.applicationId,
    ]);
    const cpuBefore = await cpuSeconds(supervisor);
    const began = performance.now();
    const started = await p.viaEdge(attacker.slug, `/flood?bytes=${FLOOD_BYTES}&seconds=${FLOOD_SECONDS}`);
    expect(started.status).toBe(200);

    // The victim, all along: requests in a loop, a deploy, a sign-up.
    const requests = { ok: 0, failed: [] as string[] };
    let flooding = true;
    const loop = (async () => {
      const deadline = Date.now() + (FLOOD_SECONDS + 60) * 1000;
      while (flooding && Date.now() < deadline) {
        const answer = await p.viaEdge(victim.slug, '/', 5000).catch((e: Error) => ({ status: 0, body: e.message }));
        if (answer.status === 200) requests.ok += 1;
        else requests.failed.push(`${answer.status} ${answer.body.slice(0, 100)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const deploy = p.deploy(victim, join(HOSTILE_FIXTURES, 'plain-node'));
    const signUp = p.signUp(victim, 'visitor@hostile.example');

    const flood = await waitFor(
      async () => {
        const status = await p.viaEdge(attacker.slug, '/flood/status', 5000);
        const parsed = status.status === 200 ? (JSON.parse(status.body) as FloodStatus) : undefined;
        return parsed && !parsed.running ? parsed : undefined;
      },
      { timeoutMs: (FLOOD_SECONDS + 60) * 1000, intervalMs: 500, what: 'the flood to end' },
    );
    const floodSeconds = (performance.now() - began) / 1000;
    const cpu = (await cpuSeconds(supervisor)) - cpuBefore;
    const [deployed, signedUp] = await Promise.all([deploy, signUp]);
    flooding = false;
    await loop;

    const logs = join(p.home, 'runtime', 'logs');
    const files = (await readdir(logs)).filter((name) => name.startsWith(`${release}.log`));
    const sizes = Object.fromEntries(await Promise.all(files.map(async (name) => [name, (await stat(join(logs, name))).size] as const)));
    const total = Object.values(sizes).reduce((a, b) => a + b, 0);
    // Only the end of a file past the budget is read (unprotected, it holds the whole gigabyte).
    const text = (await Promise.all(files.map((name) => endOf(join(logs, name), 2 * LOG_MAX_BYTES)))).join('');
    // Each line of the ring is stamped `<ISO time> <stream> ` (the owners' API reads time and stream from it).
    const markers = text.match(/^\S+ slipway \[slipway\] log rate limit: dropped \d+ lines \(\d+ bytes\) in the last \d+ s$/gm) ?? [];
    const figures = {
      supervisorCpuSeconds: Math.round(cpu * 100) / 100,
      floodSeconds: Math.round(floodSeconds * 10) / 10,
      flood,
      logFiles: sizes,
      logBytes: total,
      markers: markers.length,
      victimRequests: requests.ok,
    };
    process.stdout.write(`log-budget: ${JSON.stringify(figures)}\n`);

    const violations: string[] = [];
    if (files.length > LOG_FILES) violations.push(`the attacker's log has ${files.length} files (budget ${LOG_FILES})`);
    for (const [name, size] of Object.entries(sizes))
      if (size > LOG_MAX_BYTES) violations.push(`${name} holds ${size} bytes (budget ${LOG_MAX_BYTES} per file)`);
    if (total > LOG_FILES * LOG_MAX_BYTES) violations.push(`the attacker's log holds ${total} bytes on disk (budget ${LOG_FILES * LOG_MAX_BYTES})`);
    if (markers.length === 0) violations.push('no "[slipway] log rate limit: dropped …" marker in the log');
    // Reading 1 GiB costs the supervisor seconds of CPU (about one per 100 MiB here); reading
    // the budget costs it nothing to speak of. Loose: a quarter of a core over the flood.
    if (cpu > floodSeconds / 4)
      violations.push(`the runtime supervisor spent ${figures.supervisorCpuSeconds} s of CPU during the ${Math.round(floodSeconds)} s flood`);
    if (requests.failed.length) violations.push(`${requests.failed.length} victim request(s) failed: ${requests.failed.slice(0, 5).join('; ')}`);
    if (requests.ok === 0) violations.push('no victim request was made');
    if (deployed.status !== 'succeeded') violations.push(`the victim's deploy ${deployed.status}: ${JSON.stringify(deployed.error)}`);
    if (signedUp.status !== 200) violations.push(`the victim's sign-up answered ${signedUp.status}: ${signedUp.body}`);
    expectNone('a log burst got past its budget or hurt someone else', violations, figures);
  }, 300_000);
});
