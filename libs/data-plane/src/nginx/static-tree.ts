import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, link, lstat, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PRECOMPRESSED_DIR, PRECOMPRESSED_ENCODINGS } from '@slipway/contract';
import { resolveInTree } from '@slipway/runtime';
import { isForbiddenSegment } from '../static/forbidden-segment.js';

/** The two roots nginx serves a static release from (nginx-config.ts `StaticSite`). */
export interface StaticTree {
  root: string;
  ownCompressedRoot: string;
}

// eslint-disable-next-line no-control-regex
const UNSERVABLE = /[\u0000-\u001f\u007f\\]/;
/** Names nginx's `\.(gz|br)$` location sends to the own-compressed root. */
const COMPRESSED_NAME = /\.(gz|br)$/;

class NeedsNodeEdge extends Error {}

/** A hard link (same file system: no copy), else a copy. */
async function place(source: string, target: string): Promise<void> {
  await link(source, target).catch((error: NodeJS.ErrnoException) =>
    error.code === 'EEXIST' ? Promise.reject(error) : copyFile(source, target, constants.COPYFILE_EXCL),
  );
}

/** A directory of the release; where a precompressed form took its name (`a.br` beside a file `a`), the directory wins. */
async function directory(path: string): Promise<void> {
  await mkdir(path, { mode: 0o755 }).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
    if ((await lstat(path)).isDirectory()) return;
    await rm(path);
    await mkdir(path, { mode: 0o755 });
  });
}

/**
 * Materializes the tree nginx serves a static release from, beside (never inside) the release:
 * - `files/`: every file of the release under its own name, and the worker's precompressed forms
 *   (`.slipway-precompressed/<path>.br|.gz`) as `<path>.br|.gz` beside it, where nginx's
 *   brotli_static/gzip_static look for them;
 * - `own/`: the release's own files whose names end in `.gz`/`.br` (and every directory, so
 *   trailing-slash redirects work there too). nginx serves a request for `x.gz` from `own/` only,
 *   so a user's `x.gz` is never sent as the gzip encoding of `x`, and a precompressed form is
 *   never reachable by its own path.
 * Left out (answered 404 or by the SPA fallback, as by the Node edge): `.git`, `.env*`,
 * `.htaccess`, `.DS_Store`, `.slipway-precompressed`, names with control characters or
 * backslashes, and links that lead out of the release, nowhere, or in a loop. A link to a file
 * inside becomes that file (links are never followed by nginx: `disable_symlinks on`). A link to a
 * directory cannot be expressed without links: such a release is left to the Node edge (null).
 * Built in a temporary directory and renamed into place, so nginx never sees half a tree.
 */
export async function materializeStaticTree(releaseDir: string, treesDir: string, releaseId: string): Promise<StaticTree | null> {
  const final = join(treesDir, releaseId);
  const tree = { root: join(final, 'files'), ownCompressedRoot: join(final, 'own') };
  if (
    await lstat(final).then(
      (i) => i.isDirectory(),
      () => false,
    )
  )
    return tree;
  if (
    await lstat(join(treesDir, `${releaseId}.node`)).then(
      () => true,
      () => false,
    )
  )
    return null;
  await mkdir(treesDir, { recursive: true, mode: 0o755 });
  const temp = join(treesDir, `${releaseId}.tmp-${randomBytes(6).toString('hex')}`);
  try {
    await mkdir(join(temp, 'files'), { recursive: true, mode: 0o755 });
    await mkdir(join(temp, 'own'), { mode: 0o755 });
    await copyTree(releaseDir, temp, []);
    await rename(temp, final).catch(async (error: NodeJS.ErrnoException) => {
      // Another edge call built it meanwhile: theirs is as good.
      if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
      await rm(temp, { recursive: true, force: true });
    });
    return tree;
  } catch (error) {
    await rm(temp, { recursive: true, force: true });
    if (!(error instanceof NeedsNodeEdge)) throw error;
    await mkdir(join(treesDir, `${releaseId}.node`), { recursive: true });
    return null;
  }
}

async function copyTree(root: string, temp: string, dir: string[]): Promise<void> {
  for (const entry of await readdir(join(root, ...dir), { withFileTypes: true })) {
    const name = entry.name;
    if (isForbiddenSegment(name) || UNSERVABLE.test(name) || name === '.' || name === '..') continue;
    const rel = [...dir, name];
    if (entry.isDirectory()) {
      await directory(join(temp, 'files', ...rel));
      await directory(join(temp, 'own', ...rel));
      await copyTree(root, temp, rel);
    } else if (entry.isFile()) await placeFile(root, temp, rel, rel);
    else if (entry.isSymbolicLink()) {
      const resolved = await resolveInTree(root, dir, [name]);
      if (resolved.kind !== 'inside' || !resolved.exists || resolved.segments.some(isForbiddenSegment)) continue;
      const info = await lstat(join(root, ...resolved.segments)).catch(() => null);
      if (info?.isDirectory()) throw new NeedsNodeEdge();
      if (info?.isFile()) await placeFile(root, temp, rel, resolved.segments);
    }
  }
}

/** `rel` (the name served) gets the content of `target` (link-free path in the release) and its precompressed forms. */
async function placeFile(root: string, temp: string, rel: string[], target: string[]): Promise<void> {
  const name = rel.at(-1)!;
  if (COMPRESSED_NAME.test(name)) return place(join(root, ...target), join(temp, 'own', ...rel));
  await place(join(root, ...target), join(temp, 'files', ...rel));
  for (const { suffix } of PRECOMPRESSED_ENCODINGS) {
    const form = [PRECOMPRESSED_DIR, ...target];
    form[form.length - 1] += suffix;
    // Only plain files the worker wrote, reached without a link (as static-site.ts requires).
    const resolved = await resolveInTree(root, [], form);
    if (resolved.kind !== 'inside' || !resolved.exists || resolved.segments.join('/') !== form.join('/')) continue;
    const info = await lstat(join(root, ...form)).catch(() => null);
    if (info?.isFile()) {
      const sibling = [...rel];
      sibling[sibling.length - 1] += suffix;
      // The release's own entry of that name (a directory `a.br/`) wins over the form.
      await place(join(root, ...form), join(temp, 'files', ...sibling)).catch((error: NodeJS.ErrnoException) =>
        error.code === 'EEXIST' ? undefined : Promise.reject(error),
      );
    }
  }
}

/** Removes the trees of releases that are not in `keep` (the edge calls it after a full reload). */
export async function pruneStaticTrees(treesDir: string, keep: Set<string>): Promise<void> {
  const entries = await readdir(treesDir).catch(() => [] as string[]);
  for (const entry of entries) {
    const id = entry.replace(/\.(node|tmp-[0-9a-f]+)$/, '');
    if (!keep.has(id)) await rm(join(treesDir, entry), { recursive: true, force: true });
  }
}
