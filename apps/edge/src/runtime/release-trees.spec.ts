import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { openPlatformData, type PlatformData } from '@slipway/platform-data';
import { createTestDatabase, type TestDatabase } from '@slipway/testing';
import { ReleaseTrees } from './release-trees.js';

describe('ReleaseTrees: the unpacked trees of pruned releases go (real Postgres, real directories)', () => {
  let db: TestDatabase;
  let data: PlatformData;
  let dir: string;
  beforeAll(async () => {
    db = await createTestDatabase('releasetrees');
    data = openPlatformData({ DATABASE_URL: db.url }, { poolSize: 2 });
    dir = await mkdtemp(join(tmpdir(), 'slipway-release-trees-'));
  });
  afterAll(async () => {
    await data.close();
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  });

  /** A release row (kept by the build worker), returning its id. */
  const keptRelease = async (): Promise<string> => {
    const sql = data.infrastructure.pool;
    const owner = (await sql.query(`INSERT INTO owners (email) VALUES ($1) RETURNING id`, [`${randomUUID()}@example.com`])).rows[0].id;
    const app = (await sql.query(`INSERT INTO applications (owner_id, name, slug) VALUES ($1, 'a', $2) RETURNING id`, [owner, `a-${randomUUID().slice(0, 8)}`]))
      .rows[0].id;
    const deployment = (await sql.query(`INSERT INTO deployments (application_id, status, steps) VALUES ($1, 'succeeded', '[]') RETURNING id`, [app])).rows[0]
      .id;
    const id = randomUUID();
    await sql.query(`INSERT INTO releases (id, application_id, deployment_id, kind, artifact_key, spec) VALUES ($1, $2, $3, 'static', $4, '{}')`, [
      id,
      app,
      deployment,
      `releases/${id}.tar.gz`,
    ]);
    return id;
  };
  const unpack = async (id: string) => {
    await mkdir(join(dir, 'releases', id, 'assets'), { recursive: true });
    await writeFile(join(dir, 'releases', id, 'assets', 'a.js'), 'x');
    await mkdir(join(dir, 'nginx-static', id, 'files'), { recursive: true });
  };

  it('removes the trees of releases without a row that this edge has not used for the idle time; keeps kept ones and those in use', async () => {
    const kept = await keptRelease();
    const pruned = randomUUID();
    const prunedButServed = randomUUID();
    const prunedNode = randomUUID();
    for (const id of [kept, pruned, prunedButServed]) await unpack(id);
    await mkdir(join(dir, 'releases', prunedNode), { recursive: true });
    await writeFile(join(dir, 'nginx-static', `${prunedNode}.node`), '');
    await mkdir(join(dir, 'releases', '.tmp-not-a-release'), { recursive: true });

    const inUse = new Set([prunedButServed]);
    const trees = new ReleaseTrees(dir, { existing: (ids) => data.deployments.releases.existing(ids), inUse: () => inUse }, 60_000, new Logger('test'));
    // A fresh edge removes nothing within the idle time: it learns what it serves first.
    expect(await trees.sweep()).toEqual([]);

    const later = Date.now() + 61_000;
    expect((await trees.sweep(later)).sort()).toEqual([pruned, prunedNode].sort());
    expect((await readdir(join(dir, 'releases'))).sort()).toEqual(['.tmp-not-a-release', kept, prunedButServed].sort());
    expect((await readdir(join(dir, 'nginx-static'))).sort()).toEqual([kept, prunedButServed].sort());

    // No longer served: it goes once it has been idle for the idle time.
    inUse.clear();
    expect(await trees.sweep(later + 30_000)).toEqual([]);
    expect(await trees.sweep(later + 61_000)).toEqual([prunedButServed]);
    expect(await readdir(join(dir, 'releases'))).toEqual(expect.arrayContaining([kept]));
  });
});
