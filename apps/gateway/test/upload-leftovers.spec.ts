import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@slipway/testing';
import { startGateway, type GatewayUnderTest } from './support/platform.js';

/**
 * A gateway killed mid-upload leaves a `.part` in the blob store and (zip uploads) a spool
 * directory; the next start removes them once they are an hour old, and leaves what a live
 * upload is writing.
 */
describe('what interrupted uploads left is removed at start (real gateway, real files)', () => {
  let gw: GatewayUnderTest | undefined;
  let blobDir: string;
  let uploadDir: string;
  beforeAll(async () => {
    blobDir = await mkdtemp(join(tmpdir(), 'slipway-leftovers-blobs-'));
    uploadDir = await mkdtemp(join(tmpdir(), 'slipway-leftovers-uploads-'));
    const hourAgo = new Date(Date.now() - 3_700_000);
    await mkdir(join(blobDir, '.tmp'));
    await writeFile(join(blobDir, '.tmp', 'killed.part'), Buffer.alloc(1 << 20));
    await writeFile(join(blobDir, '.tmp', 'writing.part'), 'still arriving');
    await utimes(join(blobDir, '.tmp', 'killed.part'), hourAgo, hourAgo);
    await mkdir(join(uploadDir, 'slipway-upload-killed'));
    await writeFile(join(uploadDir, 'slipway-upload-killed', 'archive.zip'), 'PK');
    await utimes(join(uploadDir, 'slipway-upload-killed', 'archive.zip'), hourAgo, hourAgo);
    await utimes(join(uploadDir, 'slipway-upload-killed'), hourAgo, hourAgo);
    // An old directory whose archive is still being written is a live upload.
    await mkdir(join(uploadDir, 'slipway-upload-slow'));
    await writeFile(join(uploadDir, 'slipway-upload-slow', 'archive.zip'), 'PK…');
    await utimes(join(uploadDir, 'slipway-upload-slow'), hourAgo, hourAgo);
    await mkdir(join(uploadDir, 'someone-else'));
    await utimes(join(uploadDir, 'someone-else'), hourAgo, hourAgo);
    gw = await startGateway('upload-leftovers', { BLOB_DIR: blobDir, UPLOAD_TMP_DIR: uploadDir });
  });
  afterAll(async () => {
    await gw?.close();
    await rm(blobDir, { recursive: true, force: true });
    await rm(uploadDir, { recursive: true, force: true });
  });

  it('removes the stale .part and spool directory, keeps fresh ones and what is not its own', async () => {
    await waitFor(async () => ((await readdir(join(blobDir, '.tmp'))).includes('killed.part') ? undefined : true), {
      timeoutMs: 10_000,
      what: 'the stale .part to go',
    });
    expect(await readdir(join(blobDir, '.tmp'))).toEqual(['writing.part']);
    await waitFor(async () => ((await readdir(uploadDir)).includes('slipway-upload-killed') ? undefined : true), {
      timeoutMs: 10_000,
      what: 'the stale spool directory to go',
    });
    expect((await readdir(uploadDir)).sort()).toEqual(['slipway-upload-slow', 'someone-else']);
  });
});
