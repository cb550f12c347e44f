/**
 * The real extractor on real files, fed stored sources the gateway would never write: the worker
 * treats the stored source as hostile (defence in depth), so a link never carries a write out of
 * the workspace, and a link that leads out is refused even when nothing is written through it.
 * Each case has a victim directory beside the workspace, where a write through a link would land.
 */
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { gzipSync } from 'node:zlib';
import tarStream from 'tar-stream';
import { extractSource } from './source-extractor.js';
import { StepFailure } from './step-recorder.js';

type Entry = { name: string; content?: string; type?: 'file' | 'directory' | 'symlink' | 'link'; linkname?: string; mode?: number };

/** A stored source as the gateway writes it (gzip-compressed tar), holding exactly `entries`. */
async function storedSource(entries: Entry[]): Promise<Readable> {
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  const done = pipeline(pack, new Writable({ write: (chunk: Buffer, _encoding, callback) => (chunks.push(chunk), callback()) }));
  for (const entry of entries) {
    const type = entry.type ?? 'file';
    const content = Buffer.from(entry.content ?? '');
    const header = {
      name: entry.name,
      type,
      linkname: entry.linkname,
      mode: entry.mode ?? (type === 'directory' ? 0o755 : 0o644),
      size: type === 'file' ? content.length : 0,
      mtime: new Date(0),
    };
    await new Promise<void>((resolve, reject) => {
      const done = (error?: Error | null) => (error ? reject(error) : resolve());
      if (type === 'file') pack.entry(header, content, done);
      else pack.entry(header, done);
    });
  }
  pack.finalize();
  await done;
  return Readable.from([gzipSync(Buffer.concat(chunks))]);
}

describe('extractSource (real tar, real file system)', () => {
  let base: string;
  let src: string;
  let victim: string;
  beforeEach(async () => {
    base = await mkdtemp(join(tmpdir(), 'slipway-extract-'));
    src = join(base, 'src');
    victim = join(base, 'victim');
    await mkdir(src);
    await mkdir(victim);
    await writeFile(join(victim, 'file'), 'original');
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  const refusal = (entries: Entry[]) =>
    storedSource(entries).then((source) =>
      extractSource(source, src).then(
        () => null,
        (error: unknown) => error,
      ),
    );
  const expectRefused = async (entries: Entry[], message: RegExp) => {
    const error = await refusal(entries);
    expect(error).toBeInstanceOf(StepFailure);
    expect({ code: (error as StepFailure).code, message: (error as StepFailure).message }).toEqual({
      code: 'bad_source',
      message: expect.stringMatching(message),
    });
    // Nothing landed beside the workspace, and the victim's file is untouched.
    expect((await readdir(victim)).sort()).toEqual(['file']);
    expect(await readFile(join(victim, 'file'), 'utf8')).toBe('original');
  };

  it('keeps in-tree links as links (to files, to folders, dangling, in a chain), and files as files', async () => {
    const result = await extractSource(
      await storedSource([
        { name: 'AGENTS.md', content: '# agents' },
        { name: 'CLAUDE.md', type: 'symlink', linkname: 'AGENTS.md' },
        { name: 'apps/web/shared', type: 'symlink', linkname: '../../packages/shared' },
        { name: 'packages/shared/util.js', content: 'x', mode: 0o755 },
        { name: 'latest', type: 'symlink', linkname: 'dist/index.html' },
        { name: 'first', type: 'symlink', linkname: 'CLAUDE.md' },
      ]),
      src,
    );
    expect(result).toEqual({ files: 2, links: 4, bytes: 9 });
    expect(await readlink(join(src, 'CLAUDE.md'))).toBe('AGENTS.md');
    expect(await readFile(join(src, 'CLAUDE.md'), 'utf8')).toBe('# agents');
    expect(await readFile(join(src, 'first'), 'utf8')).toBe('# agents');
    expect(await readlink(join(src, 'apps/web/shared'))).toBe('../../packages/shared');
    expect(await readFile(join(src, 'apps/web/shared/util.js'), 'utf8')).toBe('x');
    expect((await lstat(join(src, 'packages/shared/util.js'))).mode & 0o777).toBe(0o755);
    expect(await readlink(join(src, 'latest'))).toBe('dist/index.html');
  });

  it('refuses a link, then a file written through it (the link-then-write attack): nothing lands outside', async () => {
    await expectRefused(
      [
        { name: 'dir', type: 'symlink', linkname: '../victim' },
        { name: 'dir/pwned', content: 'pwned' },
      ],
      /writes "dir\/pwned" below "dir", which is a symbolic link/,
    );
  });

  it('refuses a link, then a directory and a file below it', async () => {
    await expectRefused(
      [
        { name: 'dir', type: 'symlink', linkname: '../victim' },
        { name: 'dir/sub/', type: 'directory' },
      ],
      /below "dir", which is a symbolic link/,
    );
    await rm(src, { recursive: true });
    await mkdir(src);
    await expectRefused(
      [
        { name: 'dir', type: 'symlink', linkname: '../victim' },
        { name: 'dir/sub/pwned', content: 'pwned' },
      ],
      /below "dir", which is a symbolic link/,
    );
  });

  it('refuses a link, then a file of the same name (never opened through the link)', async () => {
    await expectRefused(
      [
        { name: 'x', type: 'symlink', linkname: '../victim/file' },
        { name: 'x', content: 'overwritten' },
      ],
      /names "x" twice/,
    );
  });

  it('refuses a link that leads outside, even with nothing written through it', async () => {
    await expectRefused([{ name: 'up', type: 'symlink', linkname: '../victim' }], /link "up" that leads outside the project/);
  });

  it('refuses a chain of links that ends outside, and a loop', async () => {
    await expectRefused(
      [
        { name: 'a', type: 'symlink', linkname: 'b' },
        { name: 'b', type: 'symlink', linkname: 'sub/../..' },
      ],
      /link "a" that leads outside the project/,
    );
    await rm(src, { recursive: true });
    await mkdir(src);
    await expectRefused([{ name: 'me', type: 'symlink', linkname: 'me' }], /link "me" that is in a loop of links/);
  });

  it('refuses an absolute target and a hard link', async () => {
    await expectRefused([{ name: 'abs', type: 'symlink', linkname: join(base, 'victim') }], /link "abs" with a target Slipway refuses/);
    await expectRefused(
      [
        { name: 'a.txt', content: 'a' },
        { name: 'b.txt', type: 'link', linkname: 'a.txt' },
      ],
      /a link entry \("b.txt"\)/,
    );
  });
});
