import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Installed `node_modules` per application, keyed by the lockfile's hash (plus package manager
 * and Node major): an unchanged lockfile restores them without touching the network.
 * Entries are written to a temporary name and renamed, so a half-written entry is never used.
 */
export class DependencyCache {
  constructor(private readonly root: string) {}

  /** The application's package-manager download cache (shared by its installs). */
  async downloadCacheDir(applicationId: string, owner?: { uid: number; gid: number }): Promise<string> {
    const dir = join(this.root, applicationId, 'downloads');
    await mkdir(dir, { recursive: true });
    if (owner) await run('chown', [`${owner.uid}:${owner.gid}`, dir]);
    return dir;
  }

  async keyFor(workspace: string, lockfile: string, manager: string): Promise<string> {
    const content = await readFile(join(workspace, lockfile));
    return createHash('sha256').update(`${manager}\0${process.versions.node.split('.')[0]}\0`).update(content).digest('hex').slice(0, 32);
  }

  private entry(applicationId: string, key: string): string {
    return join(this.root, applicationId, 'modules', key);
  }

  /** Copies cached node_modules into the workspace; false when there is no entry. */
  async restore(applicationId: string, key: string, workspace: string): Promise<boolean> {
    const entry = this.entry(applicationId, key);
    if (!(await stat(join(entry, 'node_modules')).catch(() => null))) return false;
    await rm(join(workspace, 'node_modules'), { recursive: true, force: true });
    await run('cp', ['-a', join(entry, 'node_modules'), join(workspace, 'node_modules')]);
    return true;
  }

  async save(applicationId: string, key: string, workspace: string): Promise<void> {
    if (!(await stat(join(workspace, 'node_modules')).catch(() => null))) return;
    const entry = this.entry(applicationId, key);
    const temp = `${entry}.tmp-${randomBytes(4).toString('hex')}`;
    await mkdir(temp, { recursive: true });
    try {
      await run('cp', ['-a', join(workspace, 'node_modules'), join(temp, 'node_modules')]);
      await rename(temp, entry).catch(async (error: NodeJS.ErrnoException) => {
        // Another worker stored the same key first: theirs is as good as ours.
        if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
      });
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
  }
}
