import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkspaceTrash } from './workspace-trash.js';

describe('WorkspaceTrash (real files, real rm)', () => {
  let base: string;
  beforeEach(async () => {
    base = await mkdtemp(join(tmpdir(), 'trash-'));
  });
  afterEach(() => rm(base, { recursive: true, force: true }));

  async function workspace(name: string): Promise<string> {
    const dir = join(base, 'workspaces', name);
    for (let i = 0; i < 50; i++) {
      await mkdir(join(dir, 'node_modules', `p${i}`), { recursive: true });
      await writeFile(join(dir, 'node_modules', `p${i}`, 'index.js'), 'x');
    }
    return dir;
  }

  it('takes a workspace out of the way at once (into a root-only directory), then removes it in the background', async () => {
    const trash = new WorkspaceTrash(join(base, 'trash'));
    const dir = await workspace('d1-1');
    await trash.dispose(dir);
    expect(await stat(dir).catch(() => null)).toBeNull();
    expect((await stat(join(base, 'trash'))).mode & 0o777).toBe(0o700);
    await trash.drained();
    expect(await readdir(join(base, 'trash'))).toEqual([]);
    // Nothing there any more: nothing to do, no error.
    await expect(trash.dispose(dir)).resolves.toBeUndefined();
  });

  it('removes what an earlier worker left in the trash when it starts', async () => {
    await mkdir(join(base, 'trash', 'd0-1-abcd', 'node_modules'), { recursive: true });
    await writeFile(join(base, 'trash', 'd0-1-abcd', 'node_modules', 'x.js'), 'x');
    const trash = new WorkspaceTrash(join(base, 'trash'));
    await trash.sweep();
    await trash.drained();
    expect(await readdir(join(base, 'trash'))).toEqual([]);
  });
});
