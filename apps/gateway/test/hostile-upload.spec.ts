import fc from 'fast-check';
import { lstat, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalBlobStore, sourceKey } from '@slipway/blob';
import { resolveLinkInTree } from '@slipway/runtime';
import { multipart, send, type Part } from './support/http.js';
import { makeTar, makeZip, readTar, type TarEntry } from './support/archives.js';
import { startGateway, type GatewayUnderTest } from './support/platform.js';

/** The 400 codes an upload may be refused with; anything else (a 500 above all) is a bug. */
const UPLOAD_CODES = ['empty', 'bad_request', 'bad_archive', 'paths_mismatch', 'too_large'];

/** Path pieces chosen to hit the edges: traversal, absolute, separators, NUL, dots, unicode. */
const segment = fc.oneof(
  fc.constantFrom(
    '..',
    '.',
    '',
    '...',
    '~',
    'a',
    'index.html',
    'C:',
    '\\..',
    '..\\a',
    '\0',
    'a\0b',
    ' ',
    '%2e%2e',
    'ｃａｆé',
    '\u202e',
    'node_modules',
    '.git',
    '.env',
  ),
  fc.string({ minLength: 1, maxLength: 12 }),
);
const hostilePath = fc.oneof(
  fc.array(segment, { minLength: 1, maxLength: 5 }).map((parts) => parts.join('/')),
  fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => `/${parts.join('/')}`),
  fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('\\')),
  fc.string({ maxLength: 300 }),
);

/** A stored path is safe when it is relative, normalised and stays below the workspace root. */
function isInsideWorkspace(path: string): boolean {
  if (!path || path.startsWith('/') || path.includes('\\') || path.includes('\0')) return false;
  return path.split('/').every((part) => part !== '' && part !== '.' && part !== '..');
}

describe('hostile upload paths and archive entries (fast-check, real HTTP)', () => {
  let gw: GatewayUnderTest;
  const blobs = () => new LocalBlobStore(gw.blobDir);
  beforeAll(async () => {
    gw = await startGateway('hostile');
  });
  afterAll(async () => {
    await gw.close();
  });

  /** Each run gets a fresh application (one active deploy per application). */
  async function deploy(parts: Part[]): Promise<{ status: number; json: { code?: string; taskId?: string } }> {
    const app = await gw.createApplication();
    const { body, contentType } = multipart(parts);
    return send(`${gw.url}/api/v1/deploy`, { method: 'POST', headers: { authorization: `Bearer ${app.key}`, 'content-type': contentType }, body });
  }

  /**
   * Accepted → every stored entry is a regular file or a symbolic link inside the workspace, and
   * once laid out on a real file system no entry is below a link and every link, resolved by
   * libs/runtime's walker (not the gateway's own rule), stays inside; refused → a coded 400.
   */
  let accepted = 0;
  let acceptedLinks = 0;
  async function expectSafe(response: { status: number; json: { code?: string; taskId?: string } }): Promise<void> {
    if (response.status === 202) {
      accepted += 1;
      const entries = await readTar(await blobs().get(sourceKey(response.json.taskId!)));
      const root = await mkdtemp(join(tmpdir(), 'slipway-hostile-laid-out-'));
      try {
        for (const [name, entry] of entries) {
          expect({ name, inside: isInsideWorkspace(name) }).toEqual({ name, inside: true });
          expect(['file', 'symlink']).toContain(entry.type);
          const segments = name.split('/');
          for (let i = 1; i < segments.length; i++) {
            const parent = join(root, ...segments.slice(0, i));
            const info = await lstat(parent).catch(() => null);
            expect({ name, parentIsLink: Boolean(info?.isSymbolicLink()) }).toEqual({ name, parentIsLink: false });
            if (!info) await mkdir(parent);
          }
          if (entry.type === 'symlink') await symlink(entry.linkname!, join(root, name));
          else await writeFile(join(root, name), entry.content, { flag: 'wx' });
        }
        for (const [name, entry] of entries) {
          if (entry.type !== 'symlink') continue;
          acceptedLinks += 1;
          expect({ name, target: entry.linkname, resolved: (await resolveLinkInTree(root, name.split('/'))).kind }).toEqual({
            name,
            target: entry.linkname,
            resolved: 'inside',
          });
        }
      } finally {
        await rm(root, { recursive: true, force: true });
      }
    } else {
      expect(response.status).toBe(400);
      expect(UPLOAD_CODES).toContain(response.json.code);
    }
  }

  it('files + paths: any path is stored inside the workspace or refused with a coded 400', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(hostilePath, { minLength: 1, maxLength: 4 }), async (paths) => {
        const parts: Part[] = [];
        for (const [i, path] of paths.entries()) {
          parts.push({ name: 'paths', value: path });
          parts.push({ name: 'files', filename: `f${i}`, content: Buffer.from(`file ${i}`) });
        }
        await expectSafe(await deploy(parts));
      }),
      { numRuns: 60 },
    );
    // The generator reaches both sides of the line, not only refusals.
    expect(accepted).toBeGreaterThan(0);
  });

  const tarEntry: fc.Arbitrary<TarEntry> = fc.record({
    name: hostilePath.filter((p) => Buffer.byteLength(p) < 100 && !p.includes('\0')),
    type: fc.constantFrom('file', 'file', 'directory', 'symlink', 'link'),
    content: fc.string({ maxLength: 20 }),
    linkname: fc
      .oneof(hostilePath, fc.constantFrom('/etc/passwd', '../../../etc/passwd', 'index.html', 'a', '..', '.', 'a/..', '../a', 'a/../..'))
      .filter((p) => Buffer.byteLength(p) < 100 && !p.includes('\0')),
  }) as fc.Arbitrary<TarEntry>;

  it('tar archive entries (names, links, directories): stored inside the workspace as files and in-tree links, or a coded 400', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(tarEntry, { minLength: 1, maxLength: 5 }), async (entries) => {
        const tar = await makeTar(entries.map((e) => (e.type === 'symlink' || e.type === 'link' ? e : { ...e, linkname: undefined })));
        await expectSafe(await deploy([{ name: 'archive', filename: 'source.tar', content: tar }]));
      }),
      { numRuns: 50 },
    );
    console.log(`tar entries: ${accepted} archives accepted so far, holding ${acceptedLinks} links`);
  });

  it('zip archive entries (names and unix modes, symlinks included): stored inside the workspace, or a coded 400', async () => {
    const zipEntry = fc.record({
      name: hostilePath.filter((p) => p.length > 0),
      content: fc.string({ maxLength: 20 }),
      unixMode: fc.constantFrom(0o100644, 0o100755, 0o120777, 0o040755, 0o010644, 0),
      deflate: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(zipEntry, { minLength: 1, maxLength: 5 }), async (entries) => {
        await expectSafe(await deploy([{ name: 'archive', filename: 'source.zip', content: makeZip(entries) }]));
      }),
      { numRuns: 50 },
    );
  });

  it('random bytes as an archive: a coded 400, never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 0, maxLength: 600 }), async (bytes) => {
        await expectSafe(await deploy([{ name: 'archive', filename: 'source.tar.gz', content: Buffer.from(bytes) }]));
      }),
      { numRuns: 40 },
    );
    // Nothing refused was kept in the upload spool.
    expect(await readdir(gw.uploadDir)).toEqual([]);
  });
});
