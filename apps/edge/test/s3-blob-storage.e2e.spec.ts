import { stat } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { DeployHarness, FIXTURES, freePort, sourceTar, waitFor } from '@slipway/testing';

function get(port: number, host: string, path = '/'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

// The build worker and the edge as real processes with S3_* set: sources, release artifacts and
// what the edge serves all go through an S3-protocol emulator (s3rver, libs/s3-emulator), not a disk.
describe('deploy and serve with blobs in S3-compatible storage (real worker, edge, emulator)', () => {
  let h: DeployHarness;
  let port: number;
  beforeAll(async () => {
    h = await DeployHarness.create('edge-s3', { s3: true });
    port = await freePort();
    await h.startEdge(port, { HEALTH_TIMEOUT_MS: '15000', DRAIN_GRACE_MS: '1000' });
    await h.startWorker({ EDGE_INTERNAL_URL: `http://127.0.0.1:${port}`, APPS_DOMAIN: `localhost:${port}` });
  }, 60_000);
  afterAll(async () => {
    await h.close();
  });

  async function deploy(slug: string, fixture: string): Promise<{ deploymentId: string; releaseId: string }> {
    const applicationId = await h.createApplication({ slug });
    const deploymentId = await h.deploy(applicationId, await sourceTar(join(FIXTURES, fixture)));
    const row = await h.waitForFinal(deploymentId);
    if (row.status !== 'succeeded') throw new Error(`${fixture} deploy failed: ${JSON.stringify(row.error)}`);
    const releaseId = (await h.pg.query('SELECT id FROM releases WHERE deployment_id = $1', [deploymentId])).rows[0].id as string;
    await waitFor(async () => ![404, 503].includes((await get(port, `${slug}.localhost:${port}`)).status), { timeoutMs: 15_000, what: `${slug} to be served` });
    return { deploymentId, releaseId };
  }

  it('builds from the source in S3, stores the release there, and the edge serves static and Node releases from it', async () => {
    const site = await deploy('s3-site', 'static-site');
    const node = await deploy('s3-node', 'node-echo');

    const home = await get(port, `s3-site.localhost:${port}`);
    expect(home.status).toBe(200);
    expect(home.body).toContain('static fixture home');
    const echo = await get(port, `s3-node.localhost:${port}`, '/hello');
    expect(echo.status).toBe(200);
    expect(JSON.parse(echo.body)).toMatchObject({ method: 'GET', url: '/hello' });

    // A source is deleted once its deployment ended (libs/blob README, "Lifecycle"), right after the commit.
    await waitFor(async () => ((await h.blobs.list('sources/')).length === 0 ? true : undefined), { timeoutMs: 15_000, what: 'the sources to be deleted' });
    const keys = await h.blobs.list('');
    expect(keys).toEqual(expect.arrayContaining([`releases/${site.releaseId}.tar.gz`, `releases/${node.releaseId}.tar.gz`]));
    expect(h.s3!.operations).toEqual(expect.arrayContaining(['PutObject', 'GetObject']));
    expect(await h.s3!.incompleteUploads()).toEqual([]);
    // Nothing fell back to the local store.
    await expect(stat(join(h.home, 'blobs'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
