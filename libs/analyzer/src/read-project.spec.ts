import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeSource, readProjectDir } from './index.js';

describe('readProjectDir with symbolic links (real file system)', () => {
  let base: string;
  let project: string;
  beforeEach(async () => {
    base = await mkdtemp(join(tmpdir(), 'analyzer-links-'));
    project = join(base, 'project');
    await mkdir(join(project, 'config'), { recursive: true });
    await mkdir(join(project, 'packages/shared'), { recursive: true });
    await writeFile(join(base, 'outside.txt'), 'OUTSIDE-SECRET');
    await writeFile(join(project, 'index.html'), '<h1>hi</h1>');
    await writeFile(join(project, 'AGENTS.md'), '# agents');
    await writeFile(join(project, 'config/slipway.json'), '{ "outputDirectory": "public" }');
    await writeFile(join(project, 'packages/shared/util.js'), 'x');
    await mkdir(join(project, 'public'));
    await writeFile(join(project, 'public/index.html'), 'served');
    await symlink('AGENTS.md', join(project, 'CLAUDE.md'));
    await symlink('config/slipway.json', join(project, 'slipway.json'));
    await symlink('packages/shared', join(project, 'shared'));
    await symlink('../outside.txt', join(project, 'out.txt'));
    await symlink(join(base, 'outside.txt'), join(project, 'abs.txt'));
    await symlink('missing.txt', join(project, 'broken.txt'));
    await symlink('loop', join(project, 'loop'));
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('reads a link to a file inside as that file, walks no linked folder, and reads nothing outside', async () => {
    const files = await readProjectDir(project);
    expect(files.map((f) => [f.path, f.text])).toEqual([
      ['AGENTS.md', '# agents'],
      ['CLAUDE.md', '# agents'],
      ['config/slipway.json', '{ "outputDirectory": "public" }'],
      ['index.html', '<h1>hi</h1>'],
      ['packages/shared/util.js', 'x'],
      ['public/index.html', 'served'],
      ['slipway.json', '{ "outputDirectory": "public" }'],
    ]);
    expect(JSON.stringify(files)).not.toContain('OUTSIDE-SECRET');
  });

  it('detection reads a linked slipway.json as the file it names', async () => {
    const { spec } = analyzeSource(await readProjectDir(project), { secretNames: [], signInEnabled: false, runtimeNodeVersion: 'v20.20.2' });
    expect(spec).toMatchObject({ kind: 'static', outputDir: 'public', overrides: ['outputDirectory'] });
  });
});
