import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { DeployHarness, FIXTURES, sourceTar } from '@slipway/testing';
import tarStream from 'tar-stream';

/**
 * A hostile tenant's build leaves links in its output (real worker process, real sandbox, real
 * Postgres/Redis): the deploy must fail with `unsafe_output` and nothing may be released.
 * The worker's SLIPWAY_HOME holds what the links aim at, as `.slipway` does on a real install.
 */
describe('build output links (real worker, sandboxed build)', () => {
  let h: DeployHarness;

  beforeAll(async () => {
    h = await DeployHarness.create('worker-links');
    // <home>/build/workspaces/<id>-<attempt>/src is the project; ../../../../pg from it is <home>/pg.
    await mkdir(join(h.home, 'pg'));
    await writeFile(join(h.home, 'pg', 'password'), 'embedded-postgres-password-canary');
    await h.startWorker();
  }, 60_000);
  afterAll(async () => {
    await h.close();
  });

  /** A project with no dependencies whose build script is `build`. */
  const project = async (build: string) =>
    sourceTar(join(FIXTURES, 'broken-build'), { 'package.json': JSON.stringify({ name: 'hostile', private: true, scripts: { build } }) });

  async function expectRefused(build: string, step: string, message: RegExp): Promise<void> {
    const id = await h.deploy(await h.createApplication(), await project(build));
    const row = await h.waitForFinal(id);
    expect(row).toMatchObject({ status: 'failed', error: { code: 'unsafe_output', step } });
    expect(row.error!.message).toMatch(message);
    expect(row.error!.message).not.toContain(h.home);
    expect((await h.pg.query('SELECT count(*)::int AS n FROM releases WHERE deployment_id = $1', [id])).rows[0].n).toBe(0);
    expect((await h.blobs.list('releases/')).length).toBe(0);
  }

  it('refuses a build whose output directory is a link out of the project (ln -s ../../../../pg dist)', async () => {
    await expectRefused('ln -s ../../../../pg dist', 'build', /^the build output dist\/ is a link that leads outside the project; nothing was packed$/);
  });

  it('refuses a link inside dist to ../../.slipway', async () => {
    await expectRefused(
      'mkdir dist && echo home > dist/index.html && ln -s ../../.slipway dist/platform',
      'package',
      /^the build output contains a link dist\/platform that leads outside the project; nothing was packed$/,
    );
  });

  it('refuses an absolute link and a chain a -> b -> ../..', async () => {
    await expectRefused('mkdir dist && echo home > dist/index.html && ln -s /etc dist/etc', 'package', /link dist\/etc that leads outside the project/);
    await expectRefused(
      'mkdir dist && echo home > dist/index.html && ln -s b dist/a && ln -s ../.. dist/b',
      'package',
      /link dist\/a that leads outside the project/,
    );
  });

  it('packs a link that stays inside the output as a link', async () => {
    const id = await h.deploy(
      await h.createApplication(),
      await project('mkdir -p dist/assets/v2 && echo home > dist/index.html && echo app > dist/assets/v2/app.js && ln -s assets/v2 dist/latest'),
    );
    const row = await h.waitForFinal(id);
    expect(row.error).toBeNull();
    const key = (await h.pg.query('SELECT artifact_key FROM releases WHERE deployment_id = $1', [id])).rows[0].artifact_key as string;
    const tar = gunzipSync(Buffer.concat((await (await h.blobs.get(key)).toArray()) as Buffer[]));
    // ustar: type '2' (symlink) at offset 156 and the link name at 157 of the entry's header.
    const header = tar.indexOf('latest\0');
    expect(tar.subarray(header + 156, header + 157).toString()).toBe('2');
    expect(tar.subarray(header + 157, header + 166).toString()).toBe('assets/v2');
  });

  it('refuses a stored source that writes through a link (gateway bypassed): bad_source at receive, nothing written outside', async () => {
    // What the gateway never stores: a link out of the workspace, then a file through it.
    const source = await tarOf([
      { name: 'package.json', type: 'file', content: '{"name":"through","private":true}' },
      { name: 'lib', type: 'symlink', linkname: '../../../../pg' },
      { name: 'lib/planted', type: 'file', content: 'planted through a link' },
    ]);
    const id = await h.deploy(await h.createApplication(), source);
    const row = await h.waitForFinal(id);
    expect(row).toMatchObject({
      status: 'failed',
      error: { code: 'bad_source', step: 'receive', message: 'the source writes "lib/planted" below "lib", which is a symbolic link' },
    });
    expect((await readdir(join(h.home, 'pg'))).sort()).toEqual(['password']);
  });
});

/** An uncompressed tar holding exactly `entries` (the harness stores it as the gateway would). */
async function tarOf(entries: { name: string; type: 'file' | 'symlink'; content?: string; linkname?: string }[]): Promise<Buffer> {
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (chunk: unknown) => chunks.push(chunk as Buffer));
  const ended = new Promise<void>((resolve, reject) => pack.on('end', resolve).on('error', reject));
  for (const entry of entries) {
    if (entry.type === 'file') pack.entry({ name: entry.name, mode: 0o644 }, entry.content ?? '');
    else pack.entry({ name: entry.name, type: 'symlink', linkname: entry.linkname, mode: 0o777 });
  }
  pack.finalize();
  await ended;
  return Buffer.concat(chunks);
}
