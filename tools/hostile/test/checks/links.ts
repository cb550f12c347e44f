/**
 * Build output links that leave the workspace: a `dist` that is itself a link to the embedded
 * Postgres directory, and a chain of innocent-looking links that ends in SLIPWAY_HOME. Both deploys
 * must fail with `unsafe_output`; the edge must never hand out what they point at, nor answer 301
 * (a directory exists) for paths outside the release.
 */
import { join } from 'node:path';
import { waitFor } from '@slipway/testing';
import { expectNone } from '../support/evidence.js';
import { HOSTILE_FIXTURES } from '../support/host.js';
import { check, type Check } from '../support/check.js';
import type { Scenario } from '../support/scenario.js';

const OUTSIDE_PATHS = [
  '/step1',
  '/step1/',
  '/step1/master.key',
  '/step1/runtime.json',
  '/step1/pg/password',
  '/step2/',
  '/key.txt',
  '/password.txt',
  '/password',
  '/data/',
  '/data/PG_VERSION',
];
const TRAVERSALS = [
  '/..',
  '/../',
  '/../pg',
  '/%2e%2e/',
  '/%2e%2e/pg',
  '/%2e%2e%2fpg/',
  '/sub/..%2f..%2f',
  '/sub/%2e%2e/%2e%2e/pg',
  '/./../master.key',
  '/%2e%2e%2f%2e%2e%2fmaster.key',
];

async function served(s: Scenario, slug: string, paths: string[]): Promise<{ path: string; status: number; location?: string; needles: string[] }[]> {
  const out = [];
  for (const path of paths) {
    const response = await s.platform.viaEdge(slug, path);
    const needles = Object.entries(s.needles)
      .filter(([, v]) => response.body.includes(v))
      .map(([k]) => k);
    out.push({ path, status: response.status, ...(response.headers['location'] ? { location: String(response.headers['location']) } : {}), needles });
  }
  return out;
}

const STATIC_SITE = 'an ordinary static site';

/**
 * Routes switch on a published message after the deploy succeeds (and the edge unpacks the release
 * first): wait until `/` shows the new release, or say it never did.
 */
async function untilServing(s: Scenario, slug: string, test: (body: string) => boolean): Promise<boolean> {
  return waitFor(async () => test((await s.platform.viaEdge(slug, '/')).body), { timeoutMs: 30_000, intervalMs: 250 }).then(
    () => true,
    () => false,
  );
}

function notLive(label: string, switched: boolean | null): string[] {
  return switched === false ? [`${label}: the deploy succeeded but its release never went live at the edge within 30 s`] : [];
}

function servingViolations(label: string, answers: Awaited<ReturnType<typeof served>>): string[] {
  return answers.flatMap((a) => [
    ...(a.needles.length ? [`${label}: GET ${a.path} → ${a.status} holding ${a.needles.join(', ')}`] : []),
    ...(a.status === 301 || a.status === 302 || a.status === 308
      ? [`${label}: GET ${a.path} → ${a.status} (to ${a.location}): a directory outside the release shows`]
      : []),
  ]);
}

export const linkChecks: Check[] = [
  check('refuses a build whose output directory is a link to ../../../../pg (unsafe_output), and never serves the database password', async (s) => {
    const before = await s.platform.deploy(s.c, join(HOSTILE_FIXTURES, 'static-site'));
    await untilServing(s, s.c.slug, (body) => body.includes(STATIC_SITE));
    const task = await s.platform.deploy(s.c, join(HOSTILE_FIXTURES, 'dist-symlink'));
    const switched = task.status === 'succeeded' ? await untilServing(s, s.c.slug, (body) => !body.includes(STATIC_SITE)) : null;
    const answers = await served(s, s.c.slug, ['/password', '/PG_VERSION', '/data/', '/']);
    const violations = [...servingViolations('dist-symlink', answers), ...notLive('dist-symlink', switched)];
    if (task.status !== 'failed' || task.error?.code !== 'unsafe_output')
      violations.push(
        `dist-symlink: deploy ${task.status}${task.error ? ` with ${task.error.code} at ${task.error.step}: ${task.error.message}` : ''} (expected failed, unsafe_output)`,
      );
    if (before.status !== 'succeeded') violations.push(`the harmless static site did not deploy first: ${JSON.stringify(before.error)}`);
    expectNone('a linked output directory got through', violations, {
      task: { status: task.status, error: task.error, steps: task.steps?.map((st) => [st.name, st.status]) },
      switched,
      answers,
      edgeLog: switched === false ? s.platform.serviceLog('edge') : undefined,
    });
  }),

  check('refuses a build output holding a link chain that leaves the workspace (unsafe_output)', async (s) => {
    // A tenant of its own: whatever the previous test left live must not answer for this one.
    const d = await s.platform.bootstrap('chain@hostile.example', 'Chain');
    const task = await s.platform.deploy(d, join(HOSTILE_FIXTURES, 'link-chain'));
    const switched = task.status === 'succeeded' ? await untilServing(s, d.slug, (body) => body.includes('link chain')) : null;
    const answers = await served(s, d.slug, OUTSIDE_PATHS);
    const violations = [...servingViolations('link-chain', answers), ...notLive('link-chain', switched)];
    if (task.status !== 'failed' || task.error?.code !== 'unsafe_output')
      violations.push(
        `link-chain: deploy ${task.status}${task.error ? ` with ${task.error.code} at ${task.error.step}: ${task.error.message}` : ''} (expected failed, unsafe_output)`,
      );
    expectNone('a link chain out of the workspace got through', violations, {
      task: { status: task.status, error: task.error, steps: task.steps?.map((st) => [st.name, st.status]) },
      switched,
      answers,
      edgeLog: switched === false ? s.platform.serviceLog('edge') : undefined,
    });
  }),

  check('answers paths that climb out of a release exactly like a path that does not exist (never 301)', async (s) => {
    const live = await s.platform.deploy(s.c, join(HOSTILE_FIXTURES, 'static-site'));
    if (!(await untilServing(s, s.c.slug, (body) => body.includes(STATIC_SITE))))
      throw new Error('the static site never went live: the traversal answers would prove nothing');
    const missing = await s.platform.viaEdge(s.c.slug, '/no-such-directory-here');
    const inTree = await s.platform.viaEdge(s.c.slug, '/sub');
    const answers = await served(s, s.c.slug, TRAVERSALS);
    const violations = servingViolations('traversal', answers);
    for (const a of answers)
      if (a.status !== missing.status && a.status !== 400) violations.push(`traversal: GET ${a.path} → ${a.status}, a missing path → ${missing.status}`);
    if (live.status !== 'succeeded') violations.push(`the static site did not deploy: ${JSON.stringify(live.error)}`);
    expectNone('the edge tells outside paths apart', violations, { missing: missing.status, inTreeDirectory: inTree.status, answers });
  }),
];
