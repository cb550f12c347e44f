import { lstat, mkdir, mkdtemp, readFile, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { gzipSync } from 'node:zlib';
import tarStream from 'tar-stream';
import { UnsafeReleaseError, extractRelease } from './index.js';

type Entry = Partial<tarStream.Header> & { name: string; body?: string };

/** A real gzipped tar, entries in the order given, exactly as a crafted artifact would hold them. */
async function artifact(entries: Entry[]): Promise<Readable> {
  const pack = tarStream.pack();
  const done = buffer(pack);
  for (const { body, ...header } of entries) pack.entry({ mode: 0o644, mtime: new Date(0), ...header }, body ?? '');
  pack.finalize();
  return Readable.from([gzipSync(await done)]);
}

const exists = (path: string) =>
  lstat(path).then(
    () => true,
    () => false,
  );

describe('extractRelease (real tar archives, real files)', () => {
  let base: string;
  let outside: string;
  let release: string;

  beforeEach(async () => {
    // base/releases/<id> is the release; base/outside is what a crafted archive aims at.
    base = await mkdtemp(join(tmpdir(), 'slipway-extract-'));
    outside = join(base, 'outside');
    await mkdir(outside);
    await writeFile(join(outside, 'target.txt'), 'original');
    await mkdir(join(base, 'releases'));
    release = join(base, 'releases', 'r1');
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  async function expectRefused(entries: Entry[], message: RegExp): Promise<void> {
    const error = await extractRelease(await artifact(entries), release).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UnsafeReleaseError);
    expect((error as Error).message).toMatch(message);
    expect(await exists(release)).toBe(false);
    expect(await readdir(join(base, 'releases'))).toEqual([]);
    expect(await readFile(join(outside, 'target.txt'), 'utf8')).toBe('original');
    expect((await readdir(outside)).sort()).toEqual(['target.txt']);
  }

  it('extracts files, directories and links that stay inside, even to an entry that comes later', async () => {
    await extractRelease(
      await artifact([
        { name: 'index.html', body: '<h1>hi</h1>' },
        { name: 'node_modules/.bin/tool', type: 'symlink', linkname: '../tool/cli.js' },
        { name: 'node_modules/tool/cli.js', body: 'console.log(1)', mode: 0o755 },
        { name: 'assets/', type: 'directory' },
        { name: 'latest', type: 'symlink', linkname: 'assets/v2' },
        { name: 'assets/v2/app.js', body: 'app' },
      ]),
      release,
    );
    expect(await readFile(join(release, 'index.html'), 'utf8')).toBe('<h1>hi</h1>');
    expect(await readlink(join(release, 'node_modules/.bin/tool'))).toBe('../tool/cli.js');
    expect(await readFile(join(release, 'node_modules/.bin/tool'), 'utf8')).toBe('console.log(1)');
    expect((await lstat(join(release, 'node_modules/tool/cli.js'))).mode & 0o777).toBe(0o755);
    expect(await readFile(join(release, 'latest/app.js'), 'utf8')).toBe('app');
  });

  it('refuses `x -> /tmp/outside` followed by `x/file`: nothing is written outside', async () => {
    await expectRefused(
      [
        { name: 'x', type: 'symlink', linkname: outside },
        { name: 'x/file', body: 'planted' },
      ],
      /absolute path/,
    );
  });

  it('refuses a relative link followed by a file below it, before writing anything through it', async () => {
    await expectRefused(
      [
        { name: 'x', type: 'symlink', linkname: '../../outside' },
        { name: 'x/planted.txt', body: 'planted' },
      ],
      /"x\/planted.txt" is below "x", which is not a directory/,
    );
  });

  it('never writes through a link that has the name of a later file entry', async () => {
    await expectRefused(
      [
        { name: 'x', type: 'symlink', linkname: '../../outside/target.txt' },
        { name: 'x', body: 'overwritten' },
      ],
      /"x" appears twice/,
    );
  });

  it('refuses `../escape`, absolute names and `.` segments', async () => {
    await expectRefused([{ name: '../escape.txt', body: 'planted' }], /name Slipway refuses/);
    expect(await exists(join(base, 'releases', 'escape.txt'))).toBe(false);
    await expectRefused([{ name: 'a/../../../outside/planted.txt', body: 'planted' }], /name Slipway refuses/);
    await expectRefused([{ name: join(outside, 'planted.txt'), body: 'planted' }], /name Slipway refuses/);
    await expectRefused([{ name: './x/./y', body: 'planted' }], /name Slipway refuses/);
  });

  it('refuses hard links, wherever they point', async () => {
    await expectRefused([{ name: 'h', type: 'link', linkname: join(outside, 'target.txt') }], /not allowed: "h" \(link\)/);
    await expectRefused([{ name: 'h', type: 'link', linkname: '../../outside/target.txt' }], /not allowed: "h" \(link\)/);
    await expectRefused(
      [
        { name: 'a.txt', body: 'a' },
        { name: 'h', type: 'link', linkname: 'a.txt' },
      ],
      /not allowed: "h" \(link\)/,
    );
  });

  it('refuses devices and FIFOs', async () => {
    await expectRefused([{ name: 'null', type: 'character-device', devmajor: 1, devminor: 3 }], /character-device/);
    await expectRefused([{ name: 'pipe', type: 'fifo' }], /fifo/);
  });

  it('refuses links that leave the release: absolute, `..`, and chains built from several entries', async () => {
    await expectRefused([{ name: 'etc', type: 'symlink', linkname: '/etc' }], /absolute path/);
    await expectRefused([{ name: 'up', type: 'symlink', linkname: '../../outside' }], /"up" leads outside the release/);
    // a -> b -> ../..: each hop looks harmless on its own.
    await expectRefused(
      [
        { name: 'a', type: 'symlink', linkname: 'b' },
        { name: 'b', type: 'symlink', linkname: '../..' },
      ],
      /leads outside the release/,
    );
    // b -> . and a -> b/..: `resolve(dirname(a), 'b/..')` is the root, the file system says its parent.
    await expectRefused(
      [
        { name: 'b', type: 'symlink', linkname: '.' },
        { name: 'a', type: 'symlink', linkname: 'b/../outside' },
      ],
      /"a" leads outside the release/,
    );
    // Leaves and comes back in: fine where it was packed, elsewhere once extracted.
    await expectRefused(
      [
        { name: 'back', type: 'symlink', linkname: '../r1/index.html' },
        { name: 'index.html', body: 'x' },
      ],
      /"back" leads outside/,
    );
  });

  it('refuses a link loop', async () => {
    await expectRefused(
      [
        { name: 'a', type: 'symlink', linkname: 'b' },
        { name: 'b', type: 'symlink', linkname: 'a' },
      ],
      /into a loop/,
    );
  });
});
