/**
 * Symbolic links in an uploaded archive (docs/guides/deploying.md, "Symbolic links in your project"): a relative
 * link that stays inside the project is stored as a link; every other link, and every entry that
 * would be written through a link, refuses the whole archive with `400 bad_archive` naming the
 * entry, and nothing of it is kept. Real HTTP, real Postgres and Redis, archives written by GNU
 * tar and Info-ZIP from real folders (as a user's tools write them) and by tar-stream (for what
 * no tool writes on purpose).
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { LocalBlobStore, sourceKey } from '@slipway/blob';
import { multipart, send, type Part } from './support/http.js';
import { makeTarGz, makeZip, readTar, type TarEntry } from './support/archives.js';
import { startGateway, type GatewayUnderTest } from './support/platform.js';

const run = promisify(execFile);
const DOC = 'http://localhost:3000/api/v1#error-bad_archive';

/** A project folder with real links: Astro's `CLAUDE.md -> AGENTS.md`, a linked package, a dangling in-tree link. */
async function projectWithLinks(root: string): Promise<void> {
  const files: Record<string, string> = { 'index.html': '<h1>links</h1>', 'AGENTS.md': '# agents', 'packages/shared/util.js': 'export const x = 1;\n' };
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
  await symlink('AGENTS.md', join(root, 'CLAUDE.md'));
  await mkdir(join(root, 'apps/web'), { recursive: true });
  await symlink('../../packages/shared', join(root, 'apps/web/shared'));
  await symlink('../AGENTS.md', join(root, 'apps/web/AGENTS.md'));
  await symlink('dist/index.html', join(root, 'latest.html'));
}

const EXPECTED_LINKS = {
  'CLAUDE.md': 'AGENTS.md',
  'apps/web/shared': '../../packages/shared',
  'apps/web/AGENTS.md': '../AGENTS.md',
  'latest.html': 'dist/index.html',
};

describe('symbolic links in an uploaded archive (real HTTP, Postgres, Redis)', () => {
  let gw: GatewayUnderTest;
  let work: string;
  const blobs = () => new LocalBlobStore(gw.blobDir);
  beforeAll(async () => {
    gw = await startGateway('links');
    work = await mkdtemp(join(tmpdir(), 'slipway-links-'));
  });
  afterAll(async () => {
    await gw.close();
    await rm(work, { recursive: true, force: true });
  });

  /** Each deploy gets a fresh application (one active deploy per application). */
  async function deploy(content: Buffer, filename = 'source.tar.gz') {
    const app = await gw.createApplication();
    const parts: Part[] = [{ name: 'archive', filename, content }];
    const { body, contentType } = multipart(parts);
    return send(`${gw.url}/api/v1/deploy`, { method: 'POST', headers: { authorization: `Bearer ${app.key}`, 'content-type': contentType }, body });
  }

  async function stored(taskId: string) {
    return readTar(await blobs().get(sourceKey(taskId)));
  }

  describe('kept as links', () => {
    it('a tar.gz written by GNU tar from a folder with in-tree links: every link stored as a link, with its target', async () => {
      const project = join(work, 'gnu-tar');
      await projectWithLinks(project);
      const archive = join(work, 'gnu.tar.gz');
      await run('tar', ['-czf', archive, '-C', project, '.']);
      const response = await deploy(await readFile(archive));
      expect(response.status).toBe(202);
      const entries = await storedWithLinks(response.json.taskId);
      expect(entries.links).toEqual(EXPECTED_LINKS);
      expect(entries.files).toEqual({ 'index.html': '<h1>links</h1>', 'AGENTS.md': '# agents', 'packages/shared/util.js': 'export const x = 1;\n' });
    });

    it('a zip written by Info-ZIP (--symlinks) from the same folder: the same links', async () => {
      const project = join(work, 'info-zip');
      await projectWithLinks(project);
      await run('zip', ['-q', '-r', '--symlinks', join(work, 'links.zip'), '.'], { cwd: project });
      const response = await deploy(await readFile(join(work, 'links.zip')), 'source.zip');
      expect(response.status).toBe(202);
      expect((await storedWithLinks(response.json.taskId)).links).toEqual(EXPECTED_LINKS);
    });

    it('a link that comes before what it names, and a chain of links that stays inside', async () => {
      const response = await deploy(
        await makeTarGz([
          { name: 'first', type: 'symlink', linkname: 'second' },
          { name: 'second', type: 'symlink', linkname: 'lib/real.txt' },
          { name: 'lib/real.txt', content: 'real' },
        ]),
      );
      expect(response.status).toBe(202);
      expect((await storedWithLinks(response.json.taskId)).links).toEqual({ first: 'second', second: 'lib/real.txt' });
    });
  });

  /** The stored source (libs/blob format) as links (name → target) and files (name → content). */
  async function storedWithLinks(taskId: string) {
    const entries = [...(await stored(taskId))];
    expect(entries.filter(([, e]) => e.type !== 'file' && e.type !== 'symlink')).toEqual([]);
    return {
      links: Object.fromEntries(entries.filter(([, e]) => e.type === 'symlink').map(([name, e]) => [name, e.linkname])),
      files: Object.fromEntries(entries.filter(([, e]) => e.type === 'file').map(([name, e]) => [name, e.content])),
    };
  }

  describe('refused with bad_archive, naming the entry, nothing kept', () => {
    let blobsBefore: string[];
    let rowsBefore: number;
    beforeEach(async () => {
      blobsBefore = await blobs().list('');
      rowsBefore = (await gw.sql.query('SELECT count(*)::int AS n FROM deployments')).rows[0].n;
    });
    afterEach(async () => {
      expect((await gw.sql.query('SELECT count(*)::int AS n FROM deployments')).rows[0].n).toBe(rowsBefore);
      expect(await blobs().list('')).toEqual(blobsBefore);
      expect(await readdir(gw.uploadDir)).toEqual([]);
    });

    const expectRefused = (response: { status: number; json: unknown }, message: string) => {
      expect({ status: response.status, body: response.json }).toEqual({
        status: 400,
        body: { error: expect.stringContaining(message), code: 'bad_archive', documentation: DOC },
      });
    };
    const index = { name: 'index.html', content: '<h1>x</h1>' };

    it.each<[string, TarEntry[], string]>([
      [
        'an absolute target',
        [index, { name: 'passwd', type: 'symlink', linkname: '/etc/passwd' }],
        'The archive entry "passwd" is a symbolic link that has an absolute target ("/etc/passwd")',
      ],
      [
        'a target that climbs out',
        [index, { name: 'up', type: 'symlink', linkname: '../secret' }],
        'The archive entry "up" is a symbolic link (to "../secret") that leads outside the project',
      ],
      [
        'a target that climbs out from a folder',
        [index, { name: 'a/b/c', type: 'symlink', linkname: '../../../x' }],
        'The archive entry "a/b/c" is a symbolic link (to "../../../x") that leads outside the project',
      ],
      [
        'a chain of links that ends outside',
        [index, { name: 'one', type: 'symlink', linkname: 'two' }, { name: 'two', type: 'symlink', linkname: 'sub/../..' }],
        'The archive entry "one" is a symbolic link (to "two") that leads outside the project',
      ],
      [
        'a chain that climbs through another link (lexically inside, really outside)',
        [index, { name: 'a/up', type: 'symlink', linkname: '..' }, { name: 'b', type: 'symlink', linkname: 'a/up/../..' }],
        'The archive entry "b" is a symbolic link (to "a/up/../..") that leads outside the project',
      ],
      ['a link to itself', [index, { name: 'me', type: 'symlink', linkname: 'me' }], 'The archive entry "me" is a symbolic link (to "me") in a loop of links'],
      [
        'two links to each other',
        [index, { name: 'a', type: 'symlink', linkname: 'b' }, { name: 'b', type: 'symlink', linkname: 'a' }],
        'The archive entry "a" is a symbolic link (to "b") in a loop of links',
      ],
      [
        'a link, then a file written through it (`a` -> `..`, then `a/x`)',
        [
          { name: 'a', type: 'symlink', linkname: '..' },
          { name: 'a/x', content: 'pwned' },
        ],
        'The archive entry "a/x" is inside "a", which is a symbolic link',
      ],
      [
        'a link to an in-tree folder, then a file written through it',
        [index, { name: 'sub/keep.txt', content: 'k' }, { name: 'dir', type: 'symlink', linkname: 'sub' }, { name: 'dir/file', content: 'through' }],
        'The archive entry "dir/file" is inside "dir", which is a symbolic link',
      ],
      [
        'a link, then a file through it spelled in another case',
        [index, { name: 'Dir', type: 'symlink', linkname: 'sub' }, { name: 'dir/file', content: 'through' }],
        'The archive entry "dir/file" is inside "Dir", which is a symbolic link',
      ],
      [
        'a link, then a directory entry through it',
        [index, { name: 'dir', type: 'symlink', linkname: 'sub' }, { name: 'dir/inner/', type: 'directory' }],
        'The archive entry "dir/inner/" is inside "dir", which is a symbolic link',
      ],
      [
        'a file, then a link over its folder',
        [index, { name: 'dir/file', content: 'x' }, { name: 'dir', type: 'symlink', linkname: 'sub' }],
        'The archive entry "dir" is both a symbolic link and a directory',
      ],
      [
        'a directory entry, then a link of the same name',
        [index, { name: 'dir/', type: 'directory' }, { name: 'dir', type: 'symlink', linkname: 'sub' }],
        'The archive entry "dir" is both a symbolic link and a directory',
      ],
      [
        'a link and a file of the same name',
        [index, { name: 'x', type: 'symlink', linkname: 'index.html' }, { name: 'x', content: 'over' }],
        'The archive entry "x" duplicates "x"',
      ],
      [
        'a hard link',
        [index, { name: 'copy.html', type: 'link', linkname: 'index.html' }],
        'The archive entry "copy.html" is a hard link (replace it with a copy or a relative symbolic link)',
      ],
      ['an empty target', [index, { name: 'empty', type: 'symlink', linkname: '' }], 'The archive entry "empty" is a symbolic link that has an empty target'],
      [
        'a target with a backslash',
        [index, { name: 'win', type: 'symlink', linkname: '..\\..\\x' }],
        'The archive entry "win" is a symbolic link that has a target with a backslash',
      ],
    ])('a tar.gz with %s', async (_what, entries, message) => {
      expectRefused(await deploy(await makeTarGz(entries)), message);
    });

    it('a zip with an absolute link, one that climbs out, and a link then a file through it', async () => {
      const link = (name: string, target: string) => ({ name, content: target, unixMode: 0o120777 });
      expectRefused(
        await deploy(makeZip([{ name: 'index.html', content: 'x' }, link('passwd', '/etc/passwd')]), 'source.zip'),
        'The archive entry "passwd" is a symbolic link that has an absolute target ("/etc/passwd")',
      );
      expectRefused(
        await deploy(makeZip([{ name: 'index.html', content: 'x' }, link('up', '../../x')]), 'source.zip'),
        'The archive entry "up" is a symbolic link (to "../../x") that leads outside the project',
      );
      expectRefused(
        await deploy(makeZip([link('a', '..'), { name: 'a/x', content: 'pwned' }]), 'source.zip'),
        'The archive entry "a/x" is inside "a", which is a symbolic link',
      );
    });

    it('a tar.gz of links each harmless but too long to follow (chains of 39 hops, each hop 600 steps): refused, the event loop not held for minutes', async () => {
      const entries: TarEntry[] = [{ name: 'index.html', content: 'x' }];
      const detour = `${'a/'.repeat(150)}${'../'.repeat(150)}`;
      for (let i = 0; i < 2000; i += 1) entries.push({ name: `l${i}`, type: 'symlink', linkname: i % 39 === 38 ? 'index.html' : `${detour}l${i + 1}` });
      expectRefused(await deploy(await makeTarGz(entries)), "that cannot be checked: the project's links take more than 256000 steps to follow");
    });

    it('a tar.gz written by GNU tar from a folder with a link out of it', async () => {
      const project = join(work, 'out');
      await mkdir(project, { recursive: true });
      await writeFile(join(project, 'index.html'), 'x');
      await symlink('../../../etc/hosts', join(project, 'hosts'));
      await run('tar', ['-czf', join(work, 'out.tar.gz'), '-C', project, '.']);
      expectRefused(
        await deploy(await readFile(join(work, 'out.tar.gz'))),
        'The archive entry "./hosts" is a symbolic link (to "../../../etc/hosts") that leads outside the project',
      );
    });
  });

  it('the stored source of an accepted upload never holds a link another entry is below (readTar sees files and links only)', async () => {
    const response = await deploy(
      await makeTarGz([
        { name: 'index.html', content: 'x' },
        { name: 'sub/a.txt', content: 'a' },
        { name: 'link', type: 'symlink', linkname: 'sub' },
      ]),
    );
    expect(response.status).toBe(202);
    const entries = await stored(response.json.taskId);
    expect([...entries].map(([name, e]) => [name, e.type])).toEqual([
      ['index.html', 'file'],
      ['sub/a.txt', 'file'],
      ['link', 'symlink'],
    ]);
  });
});
