import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';

/**
 * Where finished workspaces go. A Next.js workspace holds ~25 000 files, and removing them takes
 * seconds on a slow disk: the deployment that comes next should not wait for that. A workspace is
 * renamed into this root-only directory at once (nothing of it is reachable by the build user
 * from then on) and removed behind the worker's back, one tree at a time, by `rm -rf` (a child
 * process, so libuv's thread pool stays free for the next deployment's file work). Whatever a
 * killed worker left here is removed when the next one starts.
 */
export class WorkspaceTrash {
  private removing: Promise<void> = Promise.resolve();

  constructor(private readonly dir: string) {}

  /** Takes `path` out of the way now; it is removed in the background. */
  async dispose(path: string): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const target = join(this.dir, `${basename(path)}-${randomBytes(4).toString('hex')}`);
    const moved = await rename(path, target).then(() => 'moved' as const, (error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? 'gone' as const : 'stayed' as const));
    if (moved === 'gone') return;
    // Not movable (another file system, say): removed here and now, as before.
    if (moved === 'stayed') return rm(path, { recursive: true, force: true });
    this.schedule(target);
  }

  /** Removes what an earlier worker left in the trash. */
  async sweep(): Promise<void> {
    const left = await readdir(this.dir).catch(() => [] as string[]);
    for (const name of left) this.schedule(join(this.dir, name));
  }

  /** Resolves once every removal asked for so far has finished. */
  drained(): Promise<void> {
    return this.removing;
  }

  private schedule(target: string): void {
    this.removing = this.removing.then(() => removeTree(target));
  }
}

function removeTree(target: string): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn('rm', ['-rf', '--one-file-system', '--', target], { stdio: 'ignore' });
    child.on('error', () => rm(target, { recursive: true, force: true }).catch(() => undefined).then(() => resolve()));
    child.on('exit', () => resolve());
  });
}
