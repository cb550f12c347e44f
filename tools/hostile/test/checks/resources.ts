/**
 * A fork bomb and a 4 GB balloon in the prober, while the test polls the neighbour (through the
 * edge) and the edge's own health every 100 ms. Each attack is bounded (15 s and 2000 processes; 25 s and 4 GiB),
 * and must itself be bounded by the platform's limits, not only by ours.
 */
import { expectNone } from '../support/evidence.js';
import { check, type Check } from '../support/check.js';
import { parse, type Scenario } from '../support/scenario.js';

interface Poll {
  requests: number;
  failures: { at: number; what: string; status: number; body: string }[];
  slowestMs: number;
}

/** Polls B and the edge every 100 ms until `done` settles; a failure is a non-200 or no answer within 2 s. */
async function pollWhile(s: Scenario, done: Promise<unknown>): Promise<Poll> {
  const poll: Poll = { requests: 0, failures: [], slowestMs: 0 };
  const started = Date.now();
  let finished = false;
  void done.finally(() => (finished = true));
  while (!finished) {
    const t0 = Date.now();
    const [b, edge] = await Promise.all([s.platform.viaEdge(s.b.slug, '/', 2000), s.platform.edgeHealth(2000)]);
    poll.requests += 2;
    poll.slowestMs = Math.max(poll.slowestMs, Date.now() - t0);
    for (const [what, r] of [
      ['neighbour', b],
      ['edge /health/ready', edge],
    ] as const) {
      if (r.status !== 200) poll.failures.push({ at: Date.now() - started, what, status: r.status, body: r.body.slice(0, 120) });
    }
    await new Promise((r) => setTimeout(r, Math.max(0, 100 - (Date.now() - t0))));
  }
  return poll;
}

async function attack(s: Scenario, path: string): Promise<{ report: any; poll: Poll }> {
  const request = s.platform.viaEdge(s.a.slug, path, 45_000);
  const poll = await pollWhile(s, request);
  const response = await request;
  const report = response.status === 200 ? parse<any>(response.body, path) : { status: response.status, body: response.body.slice(0, 300) };
  return { report, poll };
}

function neighbourViolations(label: string, poll: Poll): string[] {
  if (!poll.failures.length) return [];
  const sample = poll.failures
    .slice(0, 5)
    .map((f) => `${f.what} ${f.status} at ${f.at} ms (${f.body})`)
    .join('; ');
  return [`${label}: ${poll.failures.length} of ${poll.requests} requests to the neighbour and the edge failed: ${sample}`];
}

export const resourceChecks: Check[] = [
  check('stops a fork bomb at the app’s process limit while the edge and the neighbour keep answering', async (s) => {
    const { report, poll } = await attack(s, '/resources/forkbomb?seconds=15&cap=2000');
    const violations = neighbourViolations('fork bomb', poll);
    const bomb = report?.report;
    if (!bomb) violations.push(`fork bomb: no report from the prober (${JSON.stringify(report).slice(0, 300)})`);
    else if (bomb.stoppedBy !== 'EAGAIN')
      violations.push(`fork bomb: ${bomb.spawned} processes started, stopped by ${bomb.stoppedBy} (${bomb.firstError ?? 'no error'}), not by a process limit`);
    expectNone('a fork bomb was not contained', violations, { report, poll });
  }),

  check('stops a 4 GB allocation at the app’s memory limit while the edge and the neighbour keep answering', async (s) => {
    const { report, poll } = await attack(s, '/resources/balloon?mb=4096&seconds=25');
    const violations = neighbourViolations('balloon', poll);
    const balloon = report?.report;
    // Contained means a limit ended it: the balloon killed (OOM) or refused memory, or the app as a whole stopped (502).
    const killed = report?.signal === 'SIGKILL' || report?.exitCode === 137;
    const refused = Boolean(balloon?.error);
    const appStopped = report?.status === 502;
    if (!killed && !refused && !appStopped) {
      violations.push(
        `balloon: ${balloon ? `allocated and touched ${balloon.reachedMb} MB in ${balloon.ms} ms` : `no report (${JSON.stringify(report).slice(0, 300)})`} with no limit stopping it`,
      );
    }
    expectNone('a memory balloon was not contained', violations, { report, poll });
  }),
];
