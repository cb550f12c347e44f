import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { listSourceFiles } from './source-files.js';

describe('listSourceFiles (real file system)', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'slipway-source-files-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });
  const write = async (files: Record<string, string>) => {
    for (const [path, content] of Object.entries(files)) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), content);
    }
  };
  const paths = async (includes?: string[]) => (await listSourceFiles(root, includes)).files.map((f) => f.path);

  it('sorts paths, sums sizes, and marks executables 0755', async () => {
    await write({ 'b.txt': 'bb', 'a/c.sh': 'ccc' });
    await chmod(join(root, 'a/c.sh'), 0o750);
    const listing = await listSourceFiles(root);
    expect(listing.files.map((f) => [f.path, f.mode, f.size])).toEqual([
      ['a/c.sh', 0o755, 3],
      ['b.txt', 0o644, 2],
    ]);
    expect(listing.totalBytes).toBe(5);
  });

  it('a deeper .gitignore overrides a shallower one, and anchored patterns stay in their folder', async () => {
    await write({ '.gitignore': '*.map\n/build\n', 'build/x.js': '', 'web/build/y.js': '', 'web/app.js.map': '', 'web/.gitignore': '!app.js.map\n', 'z.map': '' });
    expect(await paths()).toEqual(['.gitignore', 'web/.gitignore', 'web/app.js.map', 'web/build/y.js']);
  });

  it('never sends node_modules, .git, .env* or .slipway.json at any depth of node_modules/.git, unless included', async () => {
    await write({ 'node_modules/a/i.js': '', 'pkg/node_modules/b/i.js': '', '.git/config': '', '.env': '', 'api/.env.local': '', '.slipway.json': '{}', 'ok.js': '' });
    expect(await paths()).toEqual(['ok.js']);
    expect(await paths(['**/.env.local', 'pkg/node_modules/b/'])).toEqual(['api/.env.local', 'ok.js', 'pkg/node_modules/b/i.js']);
  });

  it('sends a symlinked file as its content, skips symlinked folders and broken links', async () => {
    await write({ 'real/file.txt': 'x' });
    await symlink(join(root, 'real/file.txt'), join(root, 'link.txt'));
    await symlink(join(root, 'real'), join(root, 'linked-dir'));
    await symlink(join(root, 'missing'), join(root, 'broken'));
    const listing = await listSourceFiles(root);
    expect(listing.files.map((f) => f.path)).toEqual(['link.txt', 'real/file.txt']);
    expect(listing.skipped.sort()).toEqual(['broken (symbolic link, broken)', 'linked-dir (symbolic link to a folder)']);
  });
});
