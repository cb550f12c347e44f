import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';

/** Trees waiting in the trash beyond which removal goes on even while deployments run (disk is bounded). */
export const HELD_BACKLOG = 2;
/** Trees waiting beyond which `dispose` waits for removals (deployments may not outrun `rm`). */
export const MAX_WAITING = 4;

/**
 * Where finished workspaces go. A Next.js workspace holds ~25 000 files, and removing them takes
 * seconds on a slow disk: the deployment that comes next should not wait for that, nor share the
 * disk with it. A workspace is renamed into this root-only directory at once (nothing of it is
 * reachable by the build user from then on) and removed by `rm -rf` (a child process, so libuv's
 * thread pool stays free), one tree at a time, while no deployment runs: `hold()` (one per running
 * deployment) keeps removals from starting and stops (SIGSTOP) one under way until the last hold
 * is released (SIGCONT), unless more than `HELD_BACKLOG` trees wait; with more than `MAX_WAITING`,
 * `dispose` itself waits (the trash never outgrows a few workspaces). The `rm` dies with the worker
 * (`setpriv --pdeathsig`), and whatever a killed worker left is removed when the next one starts.
 */
export class WorkspaceTrash {
  private removing: Promise<void> = Promise.resolve();
  private holds = 0;
  private waiting = 0;
  private current: ChildProcess | undefined;
  private stopped = false;
  private free: (() => void)[] = [];

  constructor(private readonly dir: string) {}

  /** Takes `path` out of the way now; it is removed in the background. */
  async dispose(path: string): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const target = join(this.dir, `${basename(path)}-${randomBytes(4).toString('hex')}`);
    const moved = await rename(path, target).then(
      () => 'moved' as const,
      (error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? ('gone' as const) : ('stayed' as const)),
    );
    if (moved === 'gone') return;
    // Not movable (another file system, say): removed here and now, as before.
    if (moved === 'stayed') return rm(path, { recursive: true, force: true });
    this.schedule(target);
    // Back-pressure: deployments that each leave a big tree and end faster than it goes wait here.
    while (this.waiting > MAX_WAITING) await this.removing;
  }

  /** Removes what an earlier worker left in the trash. */
  async sweep(): Promise<void> {
    const left = await readdir(this.dir).catch(() => [] as string[]);
    for (const name of left) this.schedule(join(this.dir, name));
  }

  /** A deployment runs: removals wait (within the backlog bound) until every hold is released. */
  hold(): () => void {
    this.holds += 1;
    this.pauseIfHeld();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds -= 1;
      this.wake();
    };
  }

  /** Resolves once every removal asked for so far has finished. */
  drained(): Promise<void> {
    return this.removing;
  }

  /** The running `rm`'s pid and whether it is stopped (for tests and logs). */
  get removal(): { pid: number; stopped: boolean } | null {
    return this.current?.pid ? { pid: this.current.pid, stopped: this.stopped } : null;
  }

  private mayRun(): boolean {
    return this.holds === 0 || this.waiting > HELD_BACKLOG;
  }

  private pauseIfHeld(): void {
    if (!this.current || this.stopped || this.mayRun()) return;
    this.stopped = this.signal('SIGSTOP');
  }

  private wake(): void {
    if (!this.mayRun()) return;
    if (this.current && this.stopped) this.stopped = !this.signal('SIGCONT');
    for (const resolve of this.free.splice(0)) resolve();
  }

  private signal(name: NodeJS.Signals): boolean {
    try {
      return this.current!.kill(name);
    } catch {
      return false;
    }
  }

  private schedule(target: string): void {
    this.waiting += 1;
    // Many trees waiting: held removals may go on.
    this.wake();
    this.removing = this.removing.then(async () => {
      while (!this.mayRun()) await new Promise<void>((resolve) => this.free.push(resolve));
      await this.removeTree(target);
      this.waiting -= 1;
    });
  }

  private removeTree(target: string): Promise<void> {
    return new Promise((resolve) => {
      const child = spawn('setpriv', ['--pdeathsig', 'SIGKILL', '--', 'rm', '-rf', '--one-file-system', '--', target], { stdio: 'ignore' });
      this.current = child;
      this.stopped = false;
      let finished = false;
      const done = () => {
        if (finished) return;
        finished = true;
        this.current = undefined;
        this.stopped = false;
        resolve();
      };
      child.on('error', () =>
        rm(target, { recursive: true, force: true })
          .catch(() => undefined)
          .then(done),
      );
      child.on('exit', done);
      this.pauseIfHeld();
    });
  }
}
