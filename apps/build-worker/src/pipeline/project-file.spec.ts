import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readPackageJsonOf } from './manager-commands.js';
import { openProjectFile } from './project-file.js';

describe('openProjectFile (real file system)', () => {
  let base: string;
  let project: string;
  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'slipway-project-file-'));
    project = join(base, 'project');
    await mkdir(join(project, 'config'), { recursive: true });
    await writeFile(join(base, 'outside.json'), '{"outside":true}');
    await writeFile(join(project, 'config/package.json'), '{"name":"linked"}');
    await symlink('config/package.json', join(project, 'package.json'));
    await symlink('../outside.json', join(project, 'out.json'));
    await symlink(join(base, 'outside.json'), join(project, 'abs.json'));
    await symlink('config', join(project, 'dir.json'));
    execFileSync('mkfifo', [join(project, 'fifo.json')]);
  });
  afterAll(async () => {
    await rm(base, { recursive: true, force: true });
  });

  const read = async (path: string) => {
    const opened = await openProjectFile(project, path);
    if (!opened) return null;
    try {
      return await opened.handle.readFile('utf8');
    } finally {
      await opened.handle.close();
    }
  };

  it('reads a file through a link inside the project as the file it names', async () => {
    expect(await read('package.json')).toBe('{"name":"linked"}');
    expect(await readPackageJsonOf(project)).toEqual({ path: 'package.json', bytes: 17, text: '{"name":"linked"}' });
  });

  it('opens nothing outside the project, no directory, no FIFO, nothing missing', async () => {
    for (const path of ['out.json', 'abs.json', 'dir.json', 'fifo.json', 'missing.json']) expect([path, await read(path)]).toEqual([path, null]);
  });
});
