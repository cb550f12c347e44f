import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { createBlobStore, type BlobStore } from '@slipway/blob';
import { PRECOMPRESSED_DIR } from '@slipway/contract';
import { extractRelease } from '@slipway/runtime';
import { packRelease } from './release-packer.js';
import { StepFailure } from './step-recorder.js';

/** Every path under `dir`, relative, links not followed. */
async function tree(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    out.push(path);
    if (entry.isDirectory()) out.push(...(await tree(dir, path)));
  }
  return out.sort();
}

// Real files, a real blob store, the real extractor: what the edge will find on disk.
describe('release packer: precompressed forms of a static release', () => {
  let home: string;
  let src: string;
  let dist: string;
  let blobs: BlobStore;
  const js = `export const x = ${JSON.stringify('slipway '.repeat(2000))};\n`;
  const html = `<!doctype html>${'<p>hello</p>'.repeat(200)}`;

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'slipway-precompress-'));
    src = join(home, 'src');
    dist = join(src, 'dist');
    await mkdir(join(dist, 'nested', PRECOMPRESSED_DIR), { recursive: true });
    await mkdir(join(dist, PRECOMPRESSED_DIR));
    await writeFile(join(dist, 'app.js'), js);
    await writeFile(join(dist, 'nested', 'page.html'), html);
    await writeFile(join(dist, 'tiny.css'), 'a{color:red}');
    await writeFile(join(dist, 'logo.png'), randomBytes(4096));
    await writeFile(join(dist, 'noise.txt'), randomBytes(4096));
    await symlink('app.js', join(dist, 'latest.js'));
    // The build's own directory of the reserved name, at the top and deeper: never packed.
    await writeFile(join(dist, PRECOMPRESSED_DIR, 'app.js.br'), 'planted-by-the-build');
    await writeFile(join(dist, 'nested', PRECOMPRESSED_DIR, 'x.br'), 'planted-by-the-build');
    blobs = createBlobStore({ BLOB_DIR: join(home, 'blobs') });
  });
  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('writes brotli and gzip beside each compressible file, from the same bytes, and nothing for links, small, binary or incompressible files', async () => {
    const packed = await packRelease(blobs, 'releases/r.tar.gz', dist, { project: src, precompress: true });
    const out = join(home, 'release');
    await extractRelease(await blobs.get('releases/r.tar.gz'), out);
    expect(await tree(out)).toEqual(
      [
        PRECOMPRESSED_DIR,
        `${PRECOMPRESSED_DIR}/app.js.br`,
        `${PRECOMPRESSED_DIR}/app.js.gz`,
        `${PRECOMPRESSED_DIR}/nested`,
        `${PRECOMPRESSED_DIR}/nested/page.html.br`,
        `${PRECOMPRESSED_DIR}/nested/page.html.gz`,
        'app.js',
        'latest.js',
        'logo.png',
        'nested',
        'nested/page.html',
        'noise.txt',
        'tiny.css',
      ].sort(),
    );
    expect(packed).toMatchObject({ files: 5, precompressed: 4 });
    const pc = join(out, PRECOMPRESSED_DIR);
    expect(brotliDecompressSync(await readFile(join(pc, 'app.js.br'))).toString()).toBe(js);
    expect(gunzipSync(await readFile(join(pc, 'app.js.gz'))).toString()).toBe(js);
    expect(brotliDecompressSync(await readFile(join(pc, 'nested', 'page.html.br'))).toString()).toBe(html);
    expect(gunzipSync(await readFile(join(pc, 'nested', 'page.html.gz'))).toString()).toBe(html);
    expect((await readFile(join(pc, 'app.js.br'))).length).toBeLessThan(js.length / 10);
  });

  it('packs no precompressed forms for a Node release (the app serves its own files)', async () => {
    const packed = await packRelease(blobs, 'releases/r.tar.gz', dist, { project: src });
    expect(packed.precompressed).toBe(0);
    const out = join(home, 'release');
    await extractRelease(await blobs.get('releases/r.tar.gz'), out);
    // Without precompression the build's directory is an ordinary directory of the project.
    expect(await readFile(join(out, PRECOMPRESSED_DIR, 'app.js.br'), 'utf8')).toBe('planted-by-the-build');
  });

  it('still refuses a link out of the tree with unsafe_output, storing nothing', async () => {
    await symlink('../../../.ssh', join(dist, 'keys'));
    const error = await packRelease(blobs, 'releases/r.tar.gz', dist, { project: src, precompress: true }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StepFailure);
    expect(error).toMatchObject({ code: 'unsafe_output' });
    expect(await blobs.exists('releases/r.tar.gz')).toBe(false);
  });
});
