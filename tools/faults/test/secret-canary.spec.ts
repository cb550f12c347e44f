/**
 * Canary secrets through a whole deploy (CLI → gateway → queue → worker → edge): set as app
 * secrets, one printed by the build. The step log shows `[redacted:NAME]`; neither value appears
 * in any API response, any process's output, any Redis key or any plaintext database column.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { FIXTURES } from '@slipway/testing';
import { fixtureDir } from './support/fixtures.js';
import { Platform, type Account } from './support/platform.js';

const BUILD_CANARY = 'canary-build-4e1d77a0-DO-NOT-LEAK';
const SERVER_CANARY = 'canary-server-90b3c5f2-DO-NOT-LEAK';

describe('a canary secret through a full deploy', () => {
  let platform: Platform;
  let account: Account;
  let source: string;

  beforeAll(async () => {
    platform = await Platform.start({ label: 'canary' });
    account = await platform.bootstrap('Canary Shop');
    const build = await readFile(join(FIXTURES, 'vite-spa', 'build.mjs'), 'utf8');
    source = await fixtureDir('vite-spa', { 'build.mjs': `console.log('printing my secret:', process.env.VITE_CANARY);\n${build}` });
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await rm(source, { recursive: true, force: true });
  });

  it('is redacted in build logs and absent from responses, process output, Redis and plaintext columns', async () => {
    const env = platform.cliEnv(account);
    const outputs: string[] = [];
    for (const pair of [`VITE_CANARY=${BUILD_CANARY}`, `SERVER_CANARY=${SERVER_CANARY}`]) {
      const set = await platform.cli(['secrets', 'set', pair, '--json'], env);
      expect(set.code).toBe(0);
      outputs.push(set.stdout, set.stderr);
    }
    const deployed = await platform.cli(['deploy', source, '--json', '--verbose'], env);
    outputs.push(deployed.stdout, deployed.stderr);
    expect(deployed.code).toBe(0);
    const task = JSON.parse(deployed.stdout) as { taskId?: string; id?: string; steps: { name: string; log: string }[] };
    const build = task.steps.find((s) => s.name === 'build')!;
    expect(build.log).toContain('printing my secret: [redacted:VITE_CANARY]');

    const id = task.taskId ?? task.id!;
    const api = await fetch(`http://127.0.0.1:${platform.ports.gateway}/api/v1/deployments/${id}`, { headers: { authorization: `Bearer ${account.apiKey}` } });
    outputs.push(await api.text());
    const secrets = await fetch(`http://127.0.0.1:${platform.ports.gateway}/api/v1/secrets`, { headers: { authorization: `Bearer ${account.apiKey}` } });
    outputs.push(await secrets.text());
    outputs.push((await platform.viaEdge(account)).body);
    outputs.push(platform.logs());

    // Every Redis key and value of the platform's private Redis.
    const keys = (await platform.redis.cli('--scan')).split('\n').filter(Boolean);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      outputs.push(key);
      const type = (await platform.redis.cli('type', key)).trim();
      const dump = {
        string: ['get'],
        hash: ['hgetall'],
        list: ['lrange', '0', '-1'],
        set: ['smembers'],
        zset: ['zrange', '0', '-1'],
        stream: ['xrange', '-', '+'],
      }[type];
      if (dump) outputs.push(await platform.redis.cli(dump[0]!, key, ...dump.slice(1)));
    }

    // Every text-like column of every platform table.
    const client = new pg.Client({ connectionString: platform.databaseUrl });
    await client.connect();
    try {
      const columns = (
        await client.query<{ table_name: string; column_name: string }>(`SELECT table_name, column_name FROM information_schema.columns
          WHERE table_schema = 'public' AND data_type IN ('text', 'character varying', 'jsonb', 'json', 'bytea')`)
      ).rows;
      expect(columns.length).toBeGreaterThan(20);
      for (const { table_name, column_name } of columns) {
        const rows = await client.query(`SELECT encode(convert_to(coalesce("${column_name}"::text, ''), 'UTF8'), 'escape') AS v FROM "${table_name}"`);
        outputs.push(...rows.rows.map((r: { v: string }) => r.v));
      }
    } finally {
      await client.end();
    }

    const everything = outputs.join('\n');
    expect(everything).toContain(id);
    expect(everything).toContain('VITE_CANARY');
    expect(everything).not.toContain(BUILD_CANARY);
    expect(everything).not.toContain(SERVER_CANARY);
    expect(everything).not.toMatch(/4e1d77a0|90b3c5f2/);
  });
});
