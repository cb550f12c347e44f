import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@slipway/testing';
import { HELD_BACKLOG, MAX_WAITING, WorkspaceTrash } from './workspace-trash.js';

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

  /** 30 000 files: `rm -rf` takes a second or more on them. */
  function bigWorkspace(): string {
    const dir = join(base, 'workspaces', 'big-1');
    for (let d = 0; d < 200; d++) {
      mkdirSync(join(dir, `p${d}`), { recursive: true });
      for (let f = 0; f < 150; f++) writeFileSync(join(dir, `p${d}`, `f${f}.js`), 'x');
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

  it('removes nothing while a deployment holds it, unless more than HELD_BACKLOG trees wait', async () => {
    const trash = new WorkspaceTrash(join(base, 'trash'));
    const release = trash.hold();
    await trash.dispose(await workspace('d1-1'));
    await trash.dispose(await workspace('d2-1'));
    await new Promise((r) => setTimeout(r, 300));
    expect((await readdir(join(base, 'trash'))).length).toBe(2);
    // One more than the bound: removal goes on while held, down to the bound.
    for (let i = 3; i <= HELD_BACKLOG + 2; i++) await trash.dispose(await workspace(`d${i}-1`));
    await waitFor(async () => ((await readdir(join(base, 'trash'))).length === HELD_BACKLOG ? true : undefined), {
      timeoutMs: 5000,
      what: 'the trash to shrink to the bound',
    });
    await new Promise((r) => setTimeout(r, 300));
    expect((await readdir(join(base, 'trash'))).length).toBe(HELD_BACKLOG);
    release();
    await trash.drained();
    expect(await readdir(join(base, 'trash'))).toEqual([]);
  });

  it('stops a removal under way when a deployment starts and lets it go on when the deployment ends', async () => {
    const trash = new WorkspaceTrash(join(base, 'trash'));
    // Big enough that rm is still at it when the hold comes.
    const dir = bigWorkspace();
    await trash.dispose(dir);
    const removal = await waitFor(() => trash.removal ?? undefined, { timeoutMs: 5000, intervalMs: 5, what: 'rm to start' });
    const release = trash.hold();
    expect(trash.removal).toEqual({ pid: removal.pid, stopped: true });
    // The kernel says so too: state T (stopped).
    await waitFor(async () => ((await readFile(`/proc/${removal.pid}/stat`, 'utf8')).split(') ')[1]!.startsWith('T') ? true : undefined), {
      timeoutMs: 2000,
      what: 'rm to be stopped',
    });
    const tree = join(base, 'trash', (await readdir(join(base, 'trash')))[0]!);
    const left = (await readdir(tree)).length;
    await new Promise((r) => setTimeout(r, 300));
    expect((await readdir(tree)).length).toBe(left);
    release();
    await trash.drained();
    expect(await readdir(join(base, 'trash'))).toEqual([]);
  });

  it(`never lets more than MAX_WAITING trees wait: dispose waits for removals beyond that`, async () => {
    const trash = new WorkspaceTrash(join(base, 'trash'));
    // A big tree first, so rm is still at it when the small ones come.
    const big = bigWorkspace();
    await trash.dispose(big);
    for (let i = 0; i < MAX_WAITING + 2; i++) {
      await trash.dispose(await workspace(`s${i}-1`));
      expect((await readdir(join(base, 'trash'))).length).toBeLessThanOrEqual(MAX_WAITING);
    }
    await trash.drained();
  });
});
