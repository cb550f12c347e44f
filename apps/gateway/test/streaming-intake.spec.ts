import { request as httpRequest } from 'node:http';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createGzip } from 'node:zlib';
import { LocalBlobStore, sourceKey } from '@slipway/blob';
import { multipart, send, sendRefusable, type RefusableResult } from './support/http.js';
import { makeTar, makeTarGz, readTar, type TarEntry } from './support/archives.js';
import { startGateway, type GatewayUnderTest } from './support/platform.js';

const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * tar and tar.gz archives are validated and written into the source tar while they arrive
 * (source-intake.service.ts). These tests drive that streaming path over real HTTP: bytes in
 * odd-sized pieces, bombs and refusals cut off mid-stream, clients that go away.
 */
describe('streaming intake of tar and tar.gz archives (real HTTP, Postgres, Redis)', () => {
  let gw: GatewayUnderTest;
  const blobs = () => new LocalBlobStore(gw.blobDir);
  beforeAll(async () => {
    gw = await startGateway('streaming');
  });
  afterAll(async () => {
    await gw.close();
  });

  const listOrEmpty = (dir: string) => readdir(dir).catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? [] : Promise.reject(error)));
  /** Nothing of a refused upload is left: no row for the application, no blob, no blob temp file, no spool dir. */
  async function expectNothingKept(applicationId: string): Promise<void> {
    expect((await gw.sql.query('SELECT count(*)::int AS n FROM deployments WHERE application_id = $1', [applicationId])).rows[0].n).toBe(0);
    expect(await blobs().list('sources/')).toEqual(expect.not.arrayContaining([expect.stringContaining(applicationId)]));
    expect(await listOrEmpty(join(gw.blobDir, '.tmp'))).toEqual([]);
    expect(await listOrEmpty(gw.uploadDir)).toEqual([]);
  }

  /**
   * After a refusal the client may not have read (the connection was cut under its write), the
   * gateway may still be cleaning up — or, when the client went away, not even have reached the
   * bytes it was sent (its temp files appear after a first look finds none): wait (bounded) until
   * no temp file has been seen for a whole second, then check.
   */
  async function expectNothingKeptEventually(applicationId: string): Promise<void> {
    const busy = async () => (await listOrEmpty(join(gw.blobDir, '.tmp'))).length + (await listOrEmpty(gw.uploadDir)).length > 0;
    // A deadline, not a count: on a loaded machine each check itself takes a while.
    let quietSince = Date.now();
    for (const deadline = Date.now() + 10_000; Date.now() < deadline && Date.now() - quietSince < 1000;) {
      if (await busy()) quietSince = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await expectNothingKept(applicationId);
  }

  /**
   * A refusal: the coded answer, or — the gateway cuts refused uploads off on purpose — the
   * connection closed under the client's write (EPIPE/ECONNRESET) before the answer was read.
   * Either way the gateway is still serving afterwards.
   */
  async function expectRefused(response: RefusableResult, status: number, code: string, message?: RegExp): Promise<void> {
    if (response.cutOff) {
      expect(['EPIPE', 'ECONNRESET']).toContain(response.cutOff);
      expect((await send(`${gw.url}/health/live`)).status).toBe(200);
      return;
    }
    expect({ status: response.status, code: response.json?.code }).toEqual({ status, code });
    if (message) expect(response.json.error).toMatch(message);
  }

  /** The multipart body around one archive part, as a stream of `piece`-byte chunks with pauses. */
  async function* inPieces(body: Buffer, piece: number): AsyncGenerator<Buffer> {
    for (let offset = 0, i = 0; offset < body.length; offset += piece, i++) {
      yield body.subarray(offset, offset + piece);
      // Pause now and then so the pieces reach the gateway as separate reads.
      if (i % 16 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }

  const entries: TarEntry[] = [
    { name: 'index.html', content: '<h1>streamed</h1>' },
    { name: 'bin/run.sh', content: 'echo hi\n', mode: 0o755 },
    { name: 'assets/big.bin', content: Buffer.alloc(200 * KiB + 77, 0x5a) },
    { name: 'assets/odd.txt', content: 'x'.repeat(513) },
  ];

  it.each([
    ['tar', 61],
    ['tar', 509],
    ['tar.gz', 3],
    ['tar.gz', 1000],
  ] as const)('stores a %s that arrives in %i-byte pieces (headers and data split across reads)', async (kind, piece) => {
    const app = await gw.createApplication();
    const archive = kind === 'tar' ? await makeTar(entries) : await makeTarGz(entries);
    const { body, contentType } = multipart([{ name: 'archive', filename: 'source.bin', content: archive }]);
    const response = await send(`${gw.url}/api/v1/deploy`, {
      method: 'POST',
      headers: { authorization: `Bearer ${app.key}`, 'content-type': contentType, 'transfer-encoding': 'chunked' },
      body: inPieces(body, piece),
    });
    expect(response.status).toBe(202);
    const stored = await readTar(await blobs().get(sourceKey(response.json.taskId)));
    expect(Object.fromEntries(stored)).toEqual({
      'index.html': { mode: 0o644, type: 'file', content: '<h1>streamed</h1>' },
      'bin/run.sh': { mode: 0o755, type: 'file', content: 'echo hi\n' },
      'assets/big.bin': { mode: 0o644, type: 'file', content: 'Z'.repeat(200 * KiB + 77) },
      'assets/odd.txt': { mode: 0o644, type: 'file', content: 'x'.repeat(513) },
    });
    const row = (await gw.sql.query('SELECT source_bytes FROM deployments WHERE id = $1', [response.json.taskId])).rows[0];
    expect(Number(row.source_bytes)).toBe((await blobs().stat(sourceKey(response.json.taskId)))!.bytes);
    expect(await listOrEmpty(gw.uploadDir)).toEqual([]);
  });

  it('cuts a chunked gzip bomb off mid-stream (too_large, Connection: close) and keeps no blob, temp file or spool dir', async () => {
    const app = await gw.createApplication();
    const head = multipart([{ name: 'archive', filename: 'bomb.tar.gz', content: Buffer.alloc(0) }]);
    let zerosFed = 0;
    async function* bomb(): AsyncGenerator<Buffer> {
      yield head.body.subarray(0, head.body.indexOf('\r\n\r\n') + 4);
      // 4 GiB of zeros, gzipped lazily: only as much is produced as the gateway reads.
      const gzip = createGzip();
      const zeros = Buffer.alloc(MiB);
      const feed = (async () => {
        for (let i = 0; i < 4096 && !gzip.destroyed; i++) {
          zerosFed += zeros.length;
          if (!gzip.write(zeros)) await new Promise((resolve) => gzip.once('drain', resolve));
        }
        gzip.end();
      })();
      try {
        for await (const chunk of gzip) yield chunk as Buffer;
      } finally {
        gzip.destroy();
        await feed.catch(() => undefined);
      }
    }
    const response = await sendRefusable(`${gw.url}/api/v1/deploy`, {
      method: 'POST',
      headers: { authorization: `Bearer ${app.key}`, 'content-type': head.contentType, 'transfer-encoding': 'chunked' },
      body: bomb(),
    });
    await expectRefused(response, 400, 'too_large', /expands more than 100 times/);
    if (!response.cutOff) expect(response.headers['connection']).toBe('close');
    // Cut off, not drained: a small part of the 4 GiB on offer was ever produced (the gateway
    // stops reading a little past the rule's 16 MiB floor; socket buffers and the client's
    // gzip running ahead account for the rest).
    expect(zerosFed).toBeLessThan(1024 * MiB);
    await expectNothingKeptEventually(app.id);
  });

  it('keeps nothing when the request is refused after the archive was fully streamed (a field after it)', async () => {
    const app = await gw.createApplication();
    const { body, contentType } = multipart([
      { name: 'archive', filename: 'source.tar', content: await makeTar(entries) },
      { name: 'paths', value: 'late.txt' },
    ]);
    const response = await sendRefusable(`${gw.url}/api/v1/deploy`, {
      method: 'POST',
      headers: { authorization: `Bearer ${app.key}`, 'content-type': contentType },
      body,
    });
    await expectRefused(response, 400, 'bad_request');
    await expectNothingKeptEventually(app.id);
  });

  it('keeps nothing when the client goes away in the middle of a tar', async () => {
    const app = await gw.createApplication();
    const archive = await makeTar([{ name: 'a.bin', content: Buffer.alloc(4 * MiB, 1) }]);
    const { body, contentType } = multipart([{ name: 'archive', filename: 'source.tar', content: archive }]);
    await new Promise<void>((resolve) => {
      const req = httpRequest(`${gw.url}/api/v1/deploy`, {
        method: 'POST',
        headers: { authorization: `Bearer ${app.key}`, 'content-type': contentType, 'content-length': String(body.length) },
      });
      req.on('error', () => resolve());
      req.on('close', () => resolve());
      req.write(body.subarray(0, 2 * MiB), () => setTimeout(() => req.destroy(), 50));
    });
    // Nobody is left to answer, so the cleanup is not tied to a response: give it a moment.
    await expectNothingKeptEventually(app.id);
  });
});
