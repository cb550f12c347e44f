import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@nestjs/common';
import { planeDirs } from '@slipway/data-plane';

const RELEASE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface ReleaseTreeSources {
  /** Which of these release ids still have a row (a release pruned by the build worker has none). */
  existing(releaseIds: string[]): Promise<Set<string>>;
  /** The releases this edge serves, runs or has prepared right now. */
  inUse(): Iterable<string>;
}

/**
 * Removes what this edge unpacked for releases that no longer exist: `<RUNTIME_DIR>/releases/<id>`
 * (the artifact unpacked for static serving or by the runtime for a Node release) and nginx's
 * tree `<RUNTIME_DIR>/nginx-static/<id>` (+ its `<id>.node` marker). The build worker prunes
 * releases beyond RELEASES_KEPT (rows, then artifacts); each edge removes its own copies here.
 * A release is removed only when its row is gone and this edge has not used it for `idleMs`
 * (a Node release still draining after a swap, a static one just unloaded), so nothing it serves
 * or runs loses its files. Logs are not touched (the runtime's log budget owns them).
 */
export class ReleaseTrees {
  private readonly lastUsed = new Map<string, number>();
  /** A tree this edge has not seen in use counts as used at its start (a fresh edge learns what it serves first). */
  private readonly startedAt = Date.now();

  constructor(
    private readonly runtimeDir: string,
    private readonly sources: ReleaseTreeSources,
    private readonly idleMs: number,
    private readonly logger: Logger,
  ) {}

  /** Notes what is in use now (called at every sweep, and whenever the edge changes what it serves). */
  touch(now = Date.now()): void {
    for (const id of this.sources.inUse()) this.lastUsed.set(id, now);
  }

  /** One pass; resolves with the release ids whose trees were removed. */
  async sweep(now = Date.now()): Promise<string[]> {
    this.touch(now);
    const releasesDir = join(this.runtimeDir, 'releases');
    const treesDir = planeDirs(this.runtimeDir).trees;
    const [unpacked, trees] = await Promise.all([entries(releasesDir), entries(treesDir)]);
    const candidates = new Set([...unpacked, ...trees.map((name) => name.replace(/\.node$/, ''))].filter((id) => RELEASE_ID.test(id)));
    const idle = [...candidates].filter((id) => now - (this.lastUsed.get(id) ?? this.startedAt) >= this.idleMs);
    if (idle.length === 0) return [];
    const existing = await this.sources.existing(idle);
    const removed: string[] = [];
    for (const id of idle) {
      if (existing.has(id)) continue;
      await Promise.all([
        rm(join(releasesDir, id), { recursive: true, force: true }),
        rm(join(treesDir, id), { recursive: true, force: true }),
        rm(join(treesDir, `${id}.node`), { force: true }),
      ]);
      this.lastUsed.delete(id);
      removed.push(id);
    }
    if (removed.length) this.logger.log(`removed the unpacked trees of ${removed.length} pruned release(s)`);
    return removed;
  }
}

async function entries(dir: string): Promise<string[]> {
  return readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
}
