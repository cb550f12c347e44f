import { mkdir, mkdtemp, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBlobStore, type BlobStore } from '@slipway/blob';
import { extractRelease } from '@slipway/runtime';
import { resolveOutputDir } from './output-links.js';
import { openRegular, packRelease } from './release-packer.js';
import { StepFailure } from './step-recorder.js';

// Real files, real links, a real blob store: a project as a hostile build leaves it, laid out
// as on a worker (<home>/build/workspaces/<id>/src) next to what it aims at (<home>/.slipway).

describe('release packer and output directory: links never leave the tree', () => {
  let home: string;
  let src: string;
  let blobs: BlobStore;

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'slipway-packer-'));
    src = join(home, 'build', 'workspaces', 'd1-1', 'src');
    await mkdir(join(src, 'dist'), { recursive: true });
    await writeFile(join(src, 'dist', 'index.html'), '<h1>site</h1>');
    await mkdir(join(home, '.slipway'));
    await writeFile(join(home, '.slipway', 'master.key'), 'platform-master-key-canary');
    await mkdir(join(home, 'pg'));
    await writeFile(join(home, 'pg', 'password'), 'embedded-postgres-password-canary');
    blobs = createBlobStore({ BLOB_DIR: join(home, 'blobs') });
  });
  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  /** The failure, checked to be `unsafe_output` with a message that never names a host path. */
  async function expectUnsafe(work: Promise<unknown>, message: RegExp): Promise<void> {
    const error = await work.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StepFailure);
    expect(error).toMatchObject({ code: 'unsafe_output' });
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain(home);
    expect(await blobs.exists('releases/r.tar.gz')).toBe(false);
  }
  const pack = (dir = join(src, 'dist')) => packRelease(blobs, 'releases/r.tar.gz', dir, { project: src });

  it('packs links that stay inside as links, and the release extracts with them', async () => {
    await mkdir(join(src, 'dist', 'assets', 'v2'), { recursive: true });
    await writeFile(join(src, 'dist', 'assets', 'v2', 'app.js'), 'app');
    await symlink('assets/v2', join(src, 'dist', 'latest'));
    await symlink('../index.html', join(src, 'dist', 'assets', 'home.html'));
    const packed = await pack();
    expect(packed.files).toBe(2);
    const out = join(home, 'release');
    await extractRelease(await blobs.get('releases/r.tar.gz'), out);
    expect(await readlink(join(out, 'latest'))).toBe('assets/v2');
    expect(await readFile(join(out, 'latest', 'app.js'), 'utf8')).toBe('app');
    expect(await readFile(join(out, 'assets', 'home.html'), 'utf8')).toBe('<h1>site</h1>');
  });

  it('refuses a link inside dist to ../../.slipway, naming it and not where it lands on the host', async () => {
    await symlink('../../../../../.slipway', join(src, 'dist', 'platform'));
    await expectUnsafe(pack(), /^the build output contains a link dist\/platform that leads outside the project; nothing was packed$/);
  });

  it('refuses an absolute link, even one that points back into the project', async () => {
    await symlink('/etc', join(src, 'dist', 'etc'));
    await expectUnsafe(pack(), /link dist\/etc that leads outside the project/);
    await rm(join(src, 'dist', 'etc'));
    await symlink(join(src, 'dist', 'index.html'), join(src, 'dist', 'home.html'));
    await expectUnsafe(pack(), /link dist\/home.html that leads outside the project/);
  });

  it('refuses a chain a -> b -> ../.. and a loop', async () => {
    await symlink('b', join(src, 'dist', 'a'));
    await symlink('../..', join(src, 'dist', 'b'));
    await expectUnsafe(pack(), /link dist\/a that leads outside the project/);
    await rm(join(src, 'dist', 'a'));
    await rm(join(src, 'dist', 'b'));
    await symlink('y', join(src, 'dist', 'x'));
    await symlink('x', join(src, 'dist', 'y'));
    await expectUnsafe(pack(), /link loop at dist\/x/);
  });

  it('refuses a link to the project outside the packed directory, saying where it points', async () => {
    await writeFile(join(src, 'server-notes.txt'), 'not for the public');
    await symlink('../server-notes.txt', join(src, 'dist', 'notes.txt'));
    await expectUnsafe(
      pack(),
      /^the build output contains a link dist\/notes.txt -> server-notes.txt, outside the packed directory dist\/; nothing was packed$/,
    );
  });

  it('does not read through a directory swapped for a link after the walk listed its file', async () => {
    await writeFile(join(home, '.slipway', 'f.txt'), 'platform-file-canary');
    await mkdir(join(src, 'dist', 'sub'));
    await writeFile(join(src, 'dist', 'sub', 'f.txt'), 'listed');
    const listed = await openRegular(join(src, 'dist'), 'sub/f.txt');
    await listed!.handle.close();
    // What a build process still running (no sandbox) could do between the walk and the read.
    await rm(join(src, 'dist', 'sub'), { recursive: true });
    await symlink('../../../../../.slipway', join(src, 'dist', 'sub'));
    await expectUnsafe(
      openRegular(join(src, 'dist'), 'sub/f.txt', 'dist/sub/f.txt'),
      /^the build output changed while it was packed: dist\/sub\/f.txt no longer leads to the file that was listed; nothing was packed$/,
    );
  });

  it('refuses a build output directory that is a link out of the project (ln -s ../../../../pg dist)', async () => {
    await rm(join(src, 'dist'), { recursive: true });
    await symlink('../../../../pg', join(src, 'dist'));
    await expectUnsafe(resolveOutputDir(src, 'dist'), /^the build output dist\/ is a link that leads outside the project; nothing was packed$/);
    // The packer holds the line on its own, whatever it is handed.
    await expectUnsafe(pack(), /leads outside the project/);
    await rm(join(src, 'dist'));
    await symlink('/nonexistent-on-purpose', join(src, 'dist'));
    await expectUnsafe(resolveOutputDir(src, 'dist'), /dist\/ is a link that leads outside the project/);
  });

  it('follows an output directory link that stays inside, and says when there is no output', async () => {
    await mkdir(join(src, 'build', 'out'), { recursive: true });
    await rm(join(src, 'dist'), { recursive: true });
    await symlink('build/out', join(src, 'dist'));
    expect(await resolveOutputDir(src, 'dist')).toBe(join(src, 'build', 'out'));
    expect(await resolveOutputDir(src, 'public')).toBeNull();
    expect(await resolveOutputDir(src, '.')).toBe(src);
  });
});
