/**
 * Many deploys from many applications at once, two workers: every task reaches a terminal state
 * and each application ends with exactly one live release.
 */
import { rm } from 'node:fs/promises';
import { Platform, type Account } from './support/platform.js';

const APPS = 8;
const DEPLOYS_PER_APP = 3;

describe('fault: many deploys from many applications at once', () => {
  let platform: Platform;
  let accounts: Account[];
  const dirs: string[] = [];

  beforeAll(async () => {
    platform = await Platform.start({ label: 'many', workers: 2 });
    accounts = [];
    for (let i = 0; i < APPS; i++) accounts.push(await platform.bootstrap(`Many ${i}`));
  }, 180_000);

  afterAll(async () => {
    await platform?.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('every task is terminal and every application has exactly one live release', async () => {
    const tasks: { account: Account; id: string }[] = [];
    const refusals: unknown[] = [];
    // Each application sends its deploys back to back; one active deploy per app means the later
    // ones may be refused with 409 deploy_in_progress (coded, nothing accepted): that is allowed.
    await Promise.all(
      accounts.map(async (account, i) => {
        for (let n = 0; n < DEPLOYS_PER_APP; n++) {
          const result = await platform.postDeploy(account, `<p>app ${i} deploy ${n}</p>`);
          if (result.status === 202) tasks.push({ account, id: (result.body as { taskId: string }).taskId });
          else refusals.push(result.body);
        }
      }),
    );
    for (const refusal of refusals) expect(refusal).toMatchObject({ code: 'deploy_in_progress' });
    expect(tasks.length).toBeGreaterThanOrEqual(APPS);

    const finals = [];
    for (const { account, id } of tasks) finals.push(await platform.waitForFinal(account, id, 240_000));
    expect(finals.every((t) => t.status === 'succeeded' || t.status === 'failed')).toBe(true);
    expect(finals.filter((t) => t.status === 'failed')).toEqual([]);

    // The live release is one column per application: set, and one of that application's own.
    const rows = await platform.query<{ id: string; live: string | null; owner: string | null; succeeded: number }>(
      `SELECT a.id, a.live_release_id AS live, r.application_id AS owner,
              (SELECT count(*)::int FROM deployments d WHERE d.application_id = a.id AND d.status = 'succeeded') AS succeeded
         FROM applications a LEFT JOIN releases r ON r.id = a.live_release_id`,
    );
    expect(rows).toHaveLength(APPS);
    for (const row of rows) expect(row).toMatchObject({ live: expect.any(String), owner: row.id, succeeded: expect.any(Number) });
    const inProgress = await platform.query<{ n: number }>(`SELECT count(*)::int AS n FROM deployments WHERE status NOT IN ('succeeded', 'failed')`);
    expect(inProgress[0]!.n).toBe(0);
    // What each application serves is its last successful deploy.
    for (const [i, account] of accounts.entries()) expect((await platform.viaEdge(account)).body).toMatch(new RegExp(`<p>app ${i} deploy \\d</p>`));
  });
});
