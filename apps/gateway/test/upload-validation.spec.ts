import { readdir } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { LocalBlobStore } from '@slipway/blob';
import { filesForm, multipart, send, type Part } from './support/http.js';
import { makeTar, makeTarGz, makeZip, type TarEntry } from './support/archives.js';
import { startGateway, type GatewayUnderTest, type TestApplication } from './support/platform.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const DOC = 'http://localhost:3000/api/v1#error-';

/** Every refused upload: exact status and body, and nothing kept (no row, no blob, no spool file). */
describe('POST /api/v1/deploy refuses bad uploads (real HTTP, Postgres, Redis)', () => {
  let gw: GatewayUnderTest;
  let app: TestApplication;
  beforeAll(async () => {
    gw = await startGateway('upload', { UPLOAD_MAX_BYTES: String(1 * MiB), UPLOAD_MAX_FILES: '200', UPLOAD_MAX_FILE_BYTES: String(512 * KiB) });
    app = await gw.createApplication();
  });
  afterEach(async () => {
    expect((await gw.sql.query('SELECT count(*)::int AS n FROM deployments')).rows[0].n).toBe(0);
    expect(await new LocalBlobStore(gw.blobDir).list('')).toEqual([]);
    expect(await readdir(gw.uploadDir)).toEqual([]);
  });
  afterAll(async () => {
    await gw.close();
  });

  const post = (body: Buffer | AsyncIterable<Buffer>, contentType: string, extra: Record<string, string> = {}) =>
    send(`${gw.url}/api/v1/deploy`, { method: 'POST', headers: { authorization: `Bearer ${app.key}`, 'content-type': contentType, ...extra }, body });
  const deploy = (parts: Part[]) => {
    const { body, contentType } = multipart(parts);
    return post(body, contentType);
  };
  const archive = (content: Buffer): Part[] => [{ name: 'archive', filename: 'source.zip', content }];
  const expectCode = (response: { status: number; json: unknown }, code: string, message?: RegExp) => {
    expect({ status: response.status, body: response.json }).toEqual({
      status: 400,
      body: { error: message ? expect.stringMatching(message) : expect.any(String), code, documentation: `${DOC}${code}` },
    });
  };

  describe('empty', () => {
    it('no files and no archive', async () => {
      expectCode(await deploy([]), 'empty');
      expectCode(await post(Buffer.alloc(0), 'multipart/form-data; boundary=x'), 'empty');
    });
    it('an archive with no regular files', async () => {
      expectCode(await deploy(archive(await makeTar([{ name: 'a/', type: 'directory' }]))), 'empty', /no regular files/);
      expectCode(await deploy(archive(makeZip([]))), 'empty');
    });
  });

  describe('paths_mismatch', () => {
    it('files and paths counts differ and no archive', async () => {
      expectCode(
        await deploy([...filesForm({ 'a.txt': 'a' }), { name: 'files', filename: 'b', content: Buffer.from('b') }]),
        'paths_mismatch',
        /2 "files" fields but 1 "paths"/,
      );
      expectCode(await deploy([{ name: 'paths', value: 'a.txt' }]), 'paths_mismatch');
    });
  });

  describe('bad_request', () => {
    it('not multipart', async () => {
      expectCode(await post(Buffer.from('{"files":[]}'), 'application/json'), 'bad_request', /multipart\/form-data/);
      expectCode(await post(Buffer.from('x'), 'multipart/form-data'), 'bad_request');
    });
    it('both an archive and files, or two archives', async () => {
      const tar = await makeTar([{ name: 'a.txt', content: 'a' }]);
      expectCode(await deploy([...filesForm({ 'a.txt': 'a' }), ...archive(tar)]), 'bad_request', /not both/);
      expectCode(await deploy([...archive(tar), ...filesForm({ 'a.txt': 'a' })]), 'bad_request', /not both/);
      expectCode(await deploy([...archive(tar), ...archive(tar)]), 'bad_request', /one archive/);
    });
    it('unknown fields', async () => {
      expectCode(await deploy([...filesForm({ 'a.txt': 'a' }), { name: 'branch', value: 'main' }]), 'bad_request', /Unknown field "branch"/);
      expectCode(await deploy([{ name: 'upload', filename: 'x', content: Buffer.from('x') }]), 'bad_request', /Unknown field "upload"/);
    });
    it.each([
      ['/etc/passwd', /absolute/],
      ['C:../x', /absolute/],
      ['../x', /"\.\." segment/],
      ['a/../../x', /"\.\." segment/],
      ['a\\..\\x', /backslash/],
      ['a\u0000b', /control character/],
      ['a\u001bb', /control character/],
      ['a//b', /empty segment/],
      ['a/', /empty segment/],
      ['', /empty/],
    ])('an unsafe path %j', async (path, message) => {
      expectCode(
        await deploy([
          { name: 'paths', value: path },
          { name: 'files', filename: 'x', content: Buffer.from('x') },
        ]),
        'bad_request',
        message,
      );
    });
    it('duplicate paths, also after Unicode NFC normalisation and case folding', async () => {
      expectCode(
        await deploy(
          filesForm({ 'a.txt': '1' }).concat(filesForm({ 'b.txt': '2' }), [
            { name: 'paths', value: 'a.txt' },
            { name: 'files', filename: 'a', content: Buffer.from('3') },
          ]),
        ),
        'bad_request',
        /duplicates "a.txt"/,
      );
      expectCode(await deploy(filesForm({ 'Caf\u00e9.txt': '1', 'Cafe\u0301.txt': '2' })), 'bad_request', /duplicates "Café.txt"/);
      expectCode(await deploy(filesForm({ 'README.md': '1', 'readme.md': '2' })), 'bad_request', /collides/);
      expectCode(await deploy(filesForm({ lib: '1', 'lib/a.js': '2' })), 'bad_request', /is inside "lib"/);
    });
  });

  describe('bad_archive', () => {
    it('not a zip, tar or tar.gz (content, not name, decides)', async () => {
      expectCode(
        await deploy([{ name: 'archive', filename: 'source.tar.gz', content: Buffer.from('just some text, not an archive') }]),
        'bad_archive',
        /not a zip, tar or tar.gz/,
      );
    });
    it('corrupt archives', async () => {
      const good = await makeTarGz([{ name: 'a.txt', content: 'a'.repeat(5000) }]);
      expectCode(await deploy(archive(good.subarray(0, good.length - 40))), 'bad_archive', /corrupt/);
      const zip = makeZip([{ name: 'a.txt', content: 'hello' }]);
      expectCode(await deploy(archive(zip.subarray(0, zip.length - 10))), 'bad_archive', /corrupt/);
      expectCode(await deploy(archive(Buffer.concat([Buffer.from([0x1f, 0x8b]), Buffer.alloc(100, 7)]))), 'bad_archive', /corrupt/);
    });
    it.each([
      ['../evil.txt', /escapes the root/],
      ['a/../../evil.txt', /escapes the root/],
      ['/etc/evil', /absolute/],
      ['C:\\evil', /backslash|corrupt/],
    ])('a zip-slip zip with %j', async (name, message) => {
      expectCode(
        await deploy(
          archive(
            makeZip([
              { name: 'ok.txt', content: 'ok' },
              { name, content: 'pwned' },
            ]),
          ),
        ),
        'bad_archive',
        message,
      );
    });
    it.each([
      ['../evil.txt', /escapes the root/],
      ['/etc/evil', /absolute/],
      ['a\\..\\evil', /backslash/],
    ])('a tar.gz with %j', async (name, message) => {
      expectCode(await deploy(archive(await makeTarGz([{ name, content: 'pwned' }]))), 'bad_archive', message);
    });
    it.each<[string, TarEntry[], RegExp]>([
      ['a symlink', [{ name: 'link', type: 'symlink', linkname: '/etc/passwd' }], /symbolic link/],
      [
        'a symlink then a file of the same name',
        [
          { name: 'x', type: 'symlink', linkname: '/tmp' },
          { name: 'x', content: 'over' },
        ],
        /symbolic link/,
      ],
      [
        'a hard link',
        [
          { name: 'a.txt', content: 'a' },
          { name: 'b.txt', type: 'link', linkname: 'a.txt' },
        ],
        /hard link/,
      ],
      ['a FIFO', [{ name: 'pipe', type: 'fifo' }], /FIFO/],
      ['a device', [{ name: 'null', type: 'character-device' }], /device/],
      [
        'duplicate entries',
        [
          { name: 'a.txt', content: '1' },
          { name: './a.txt', content: '2' },
        ],
        /duplicates "a.txt"/,
      ],
      [
        'a case-folding collision',
        [
          { name: 'A.txt', content: '1' },
          { name: 'a.txt', content: '2' },
        ],
        /collides/,
      ],
    ])('a tar with %s', async (_what, entries, message) => {
      expectCode(await deploy(archive(await makeTar(entries))), 'bad_archive', message);
    });
    it('a zip with a symlink', async () => {
      expectCode(await deploy(archive(makeZip([{ name: 'link', content: '/etc/passwd', unixMode: 0o120777 }]))), 'bad_archive', /symbolic link/);
    });
  });

  describe('too_large (checked while streaming)', () => {
    it('an upload over the total limit is cut off, not read to the end', async () => {
      let sent = 0;
      const head = multipart([{ name: 'archive', filename: 'big.tar', content: Buffer.alloc(0) }]);
      // A valid tar stream (each entry under the file limit), so the limit that stops it is the
      // upload's total size, while the archive is being validated and stored as it arrives.
      const entry = await makeTar([{ name: 'chunk.bin', content: Buffer.alloc(63 * KiB, 1) }]);
      const oneEntry = entry.subarray(0, 512 + 63 * KiB);
      async function* stream() {
        yield head.body.subarray(0, head.body.indexOf('\r\n\r\n') + 4);
        for (let i = 0; i < 50 * 16; i++) {
          sent += oneEntry.length;
          const named = Buffer.from(oneEntry);
          named.write(`c${i}.bin`.padEnd(9, '\0'), 0, 'latin1');
          named.write(checksum(named), 148, 'latin1');
          yield named;
        }
      }
      const response = await post(stream(), head.contentType, { 'transfer-encoding': 'chunked' });
      expectCode(response, 'too_large', /larger than 1048576 bytes/);
      expect(response.headers['connection']).toBe('close');
      expect(sent).toBeLessThan(20 * MiB);
    });
    it('an upload that is not an archive is refused at its first bytes and cut off', async () => {
      let sent = 0;
      const head = multipart([{ name: 'archive', filename: 'big.tar', content: Buffer.alloc(0) }]);
      async function* stream() {
        yield head.body.subarray(0, head.body.indexOf('\r\n\r\n') + 4);
        const chunk = Buffer.alloc(64 * KiB, 1);
        for (let i = 0; i < 50 * 16; i++) {
          sent += chunk.length;
          yield chunk;
        }
      }
      const response = await post(stream(), head.contentType, { 'transfer-encoding': 'chunked' });
      expectCode(response, 'bad_archive', /not a zip, tar or tar.gz/);
      expect(response.headers['connection']).toBe('close');
      expect(sent).toBeLessThan(20 * MiB);
    });
    it('a declared Content-Length over the limit is refused before reading', async () => {
      const { body, contentType } = multipart(filesForm({ 'a.txt': 'a' }));
      const response = await send(`${gw.url}/api/v1/deploy`, {
        method: 'POST',
        headers: { authorization: `Bearer ${app.key}`, 'content-type': contentType, 'content-length': String(2 * MiB) },
        body: (async function* () {
          yield body;
        })(),
      });
      expectCode(response, 'too_large');
    });
    it('a single file over the file limit', async () => {
      expectCode(await deploy(filesForm({ 'big.bin': Buffer.alloc(600 * KiB) })), 'too_large', /files\[0\] is larger than 524288 bytes/);
      expectCode(
        await deploy(archive(await makeTarGz([{ name: 'big.bin', content: Buffer.alloc(600 * KiB) }]))),
        'too_large',
        /"big.bin" is larger than 524288 bytes/,
      );
    });
    it('more files than the limit', async () => {
      const many: Record<string, string> = {};
      for (let i = 0; i < 201; i++) many[`f${i}.txt`] = 'x';
      expectCode(await deploy(filesForm(many)), 'too_large', /more than 200/);
      expectCode(await deploy(archive(await makeTarGz(Object.keys(many).map((name) => ({ name, content: 'x' }))))), 'too_large', /more than 200 files/);
    });
    it('more paths than the limit, with or without a rootDirectory beside them', async () => {
      const paths = (n: number) => Array.from({ length: n }, (_, i) => ({ name: 'paths', value: `f${i}.txt` }));
      expectCode(await deploy(paths(201)), 'too_large', /more than 200 paths/);
      expectCode(await deploy([{ name: 'rootDirectory', value: 'apps/web' }, ...paths(201)]), 'too_large', /more than 200 paths/);
      // The limit counts paths, not fields: 200 paths and a rootDirectory are within it.
      expectCode(await deploy([{ name: 'rootDirectory', value: 'apps/web' }, ...paths(200)]), 'paths_mismatch', /0 "files" fields but 200 "paths"/);
    });
    it('a gzip bomb (a small tar.gz that expands past the compression ratio)', async () => {
      const entries = Array.from({ length: 100 }, (_, i) => ({ name: `zeros/${i}.bin`, content: Buffer.alloc(400 * KiB) }));
      const bomb = await makeTarGz(entries);
      expect(bomb.length).toBeLessThan(200 * KiB);
      expectCode(await deploy(archive(bomb)), 'too_large', /expands more than 100 times/);
    });
    it('a gzip bomb that is not even a tar', async () => {
      const bomb = gzipSync(Buffer.alloc(64 * MiB));
      expectCode(await deploy(archive(bomb)), 'too_large', /expands more than 100 times/);
    });
    it('a zip bomb (an entry declaring more than the file limit)', async () => {
      expectCode(
        await deploy(archive(makeZip([{ name: 'zeros.bin', content: Buffer.alloc(8 * MiB), deflate: true }]))),
        'too_large',
        /larger than 524288 bytes/,
      );
    });
  });
});

/** The ustar header checksum field of a 512-byte header block. */
function checksum(header: Buffer): string {
  let sum = 8 * 0x20;
  for (let i = 0; i < 512; i++) if (i < 148 || i >= 156) sum += header[i]!;
  return `${sum.toString(8).padStart(6, '0')}\0 `;
}
