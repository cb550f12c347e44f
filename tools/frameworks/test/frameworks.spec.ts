/**
 * `pnpm test:frameworks`: one fixture per framework, shaped like its official starter, deployed
 * through the real CLI to the platform as `pnpm start` runs it (build sandbox and runtime sandbox
 * on, the real edge), installed from the npm registry during the run, then checked over HTTP
 * through the edge by Host: home page, an SSR route, an API route, an SPA deep link, an asset and
 * its cache header — whichever apply. The table is in fixtures.ts (README: how to add one).
 */
import { randomBytes } from 'node:crypto';
import { FIXTURES, type Check, type FrameworkFixture } from './fixtures.js';
import { SuiteRun, failureReport, selected } from './suite-run.js';

/** Jobs the build worker runs at once (the platform's WORKER_CONCURRENCY); 3 keeps 2 cores busy while installs wait on the registry. */
const CONCURRENCY = Number(process.env['FRAMEWORKS_CONCURRENCY'] ?? 3);
/** One deploy, from `slipway deploy` to its final status (queue wait included). */
const DEPLOY_TIMEOUT_MS = 20 * 60_000;
const fixtures = selected(FIXTURES);

function header(value: string | string[] | undefined): string {
  return Array.isArray(value) ? value.join(', ') : (value ?? '');
}

async function check(run: SuiteRun, slug: string, c: Check): Promise<void> {
  if (c.role === 'asset') {
    const page = await run.page(slug, c.from, 200);
    const found = c.pattern.exec(page.body)?.[1];
    expect([c.from, found ? 'asset linked' : `no asset matching ${c.pattern} in ${page.body.slice(0, 1500)}`]).toEqual([c.from, 'asset linked']);
    const path = found!.startsWith('/') ? found! : `/${found}`;
    const asset = await run.page(slug, path, 200);
    expect({ path, status: asset.status, cacheControl: header(asset.headers['cache-control']) }).toEqual({
      path,
      status: 200,
      cacheControl: expect.stringMatching(c.cacheControl),
    });
    if (c.contentType) expect(header(asset.headers['content-type'])).toMatch(c.contentType);
    expect(asset.body.length).toBeGreaterThan(0);
    for (const text of c.text ?? []) expect({ path, found: asset.body.includes(text) }).toEqual({ path, found: true });
    return;
  }
  const nonce = c.echo ? `n${randomBytes(6).toString('hex')}` : null;
  const path = nonce ? `${c.path}${c.path.includes('?') ? '&' : '?'}${c.echo}=${nonce}` : c.path;
  const status = c.status ?? 200;
  const response = await run.page(slug, path, status);
  expect({ role: c.role, path, status: response.status }).toEqual({ role: c.role, path, status });
  for (const text of [...(c.text ?? []), ...(nonce ? [nonce] : [])]) {
    if (typeof text === 'string') expect({ path, body: response.body.includes(text) ? text : response.body.slice(0, 2000) }).toEqual({ path, body: text });
    else expect(response.body).toMatch(text);
  }
  if (c.json) expect(JSON.parse(response.body)).toMatchObject(c.json);
  if (c.contentType) expect(header(response.headers['content-type'])).toMatch(c.contentType);
  if (c.cacheControl) expect(header(response.headers['cache-control'])).toMatch(c.cacheControl);
}

describe('framework starters through `slipway deploy`, the platform as `pnpm start` runs it, and the edge', () => {
  let run: SuiteRun;

  beforeAll(async () => {
    run = await SuiteRun.start(CONCURRENCY, DEPLOY_TIMEOUT_MS);
    run.startAll(fixtures);
  }, 200_000);

  afterAll(async () => {
    await run?.stop();
  }, 5 * 60_000); // the launcher stops, then its home goes: every release, whole Next.js projects included

  it.each(fixtures.map((f) => [f.name, f] as [string, FrameworkFixture]))('%s', async (name, fixture) => {
    const { account, task, ms } = await run.result(name);
    // The deploy time goes to the log for whoever reads it (never asserted; see bench/ for figures).
    process.stdout.write(
      `frameworks: ${name} ${task.status} in ${(ms / 1000).toFixed(1)} s (${(task.steps ?? []).map((s) => `${s.name} ${((s.durationMs ?? 0) / 1000).toFixed(1)}s`).join(', ')})\n`,
    );
    if (fixture.failure && !(await fixture.failure.unless())) {
      // The deploy must fail where it should, saying what failed in the framework's own words.
      expect({ status: task.status, code: task.error?.code, step: task.error?.step }).toEqual({
        status: 'failed',
        code: fixture.failure.code,
        step: fixture.failure.step,
      });
      for (const pattern of fixture.failure.message) expect(task.error?.message).toMatch(pattern);
      return;
    }
    if (task.status !== 'succeeded') throw new Error(`${name} did not deploy: ${failureReport(task)}`);

    const spec = task.spec ?? {};
    const nodeMajor = typeof spec.nodeVersion === 'string' ? Number(spec.nodeVersion.split('.')[0]) : null;
    expect({
      framework: spec.framework,
      kind: spec.kind,
      nodeMajor,
      ...(fixture.spec.packageManager !== undefined ? { packageManager: spec['packageManager'] } : {}),
    }).toEqual(fixture.spec);
    const codes = (task.warnings ?? []).map((w) => w.code).sort();
    // On a mismatch the whole warnings (with the build's own lines) are the evidence.
    expect({ codes, warnings: codes.join() === [...fixture.warnings].sort().join() ? 'as listed' : task.warnings }).toEqual({
      codes: [...fixture.warnings].sort(),
      warnings: 'as listed',
    });
    if (fixture.buildWarnings) expect(task.warnings?.find((w) => w.code === 'build_output_warnings')?.detail).toMatch(fixture.buildWarnings);
    // The platform's sandboxes are on: no deploy may say it ran without them.
    expect((task.hazards ?? []).map((h) => h.code).filter((code) => code.startsWith('unsandboxed'))).toEqual([]);

    for (const c of fixture.checks) await check(run, account.slug, c);
  });
});
