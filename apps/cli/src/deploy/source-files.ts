import { lstat, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import ignore, { type Ignore } from 'ignore';

export interface SourceFile {
  /** Relative, `/`-separated path inside the archive. */
  path: string;
  absolute: string;
  size: number;
  mode: number;
}

export interface SourceListing {
  files: SourceFile[];
  totalBytes: number;
  /** Symlinked directories and other entries that are not sent (shown with --verbose). */
  skipped: string[];
}

/**
 * Never sent unless an --include pattern names them: dependencies, history, local secrets, and
 * the CLI's own .slipway.json (it may hold the API key).
 */
const ALWAYS_EXCLUDED = ignore().add(['node_modules/', '.git/', '.env*', '/.slipway.json']);
const IGNORE_FILES = ['.gitignore', '.slipwayignore'];

interface Rules {
  /** Directory these rules were read in, relative to the root ('' for the root). */
  base: string;
  matcher: Ignore;
}

/**
 * The files `slipway deploy` sends: everything under `root` except what `.gitignore` and
 * `.slipwayignore` (in any folder, git semantics, relative to their folder) exclude, and never
 * `node_modules`, `.git` or `.env*` — unless one of `includes` (gitignore-style patterns,
 * relative to the root) names the path, which wins over every exclusion.
 */
export async function listSourceFiles(root: string, includes: string[] = []): Promise<SourceListing> {
  const include = ignore().add(includes);
  const listing: SourceListing = { files: [], totalBytes: 0, skipped: [] };
  await walk(root, '', [], include, includes, listing);
  listing.files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return listing;
}

async function walk(root: string, dir: string, inherited: Rules[], include: Ignore, includes: string[], listing: SourceListing): Promise<void> {
  const absoluteDir = join(root, dir);
  const rules = [...inherited];
  for (const name of IGNORE_FILES) {
    const text = await readFile(join(absoluteDir, name), 'utf8').catch(() => null);
    if (text !== null) rules.push({ base: dir, matcher: ignore().add(text) });
  }
  const entries = await readdir(absoluteDir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const entry of entries) {
    const path = dir ? `${dir}/${entry.name}` : entry.name;
    const absolute = join(absoluteDir, entry.name);
    let info = await lstat(absolute);
    if (info.isSymbolicLink()) {
      const target = await stat(absolute).catch(() => null);
      if (!target || target.isDirectory()) {
        listing.skipped.push(`${path} (symbolic link${target ? ' to a folder' : ', broken'})`);
        continue;
      }
      info = target;
    }
    const isDir = info.isDirectory();
    const candidate = isDir ? `${path}/` : path;
    const included = include.ignores(candidate);
    if (!included && isExcluded(candidate, rules)) {
      if (!isDir || !mayIncludeBelow(path, includes)) continue;
    }
    if (isDir) {
      await walk(root, path, rules, include, includes, listing);
    } else if (info.isFile()) {
      if (!included && isExcluded(candidate, rules)) continue;
      listing.files.push({ path, absolute, size: info.size, mode: info.mode & 0o111 ? 0o755 : 0o644 });
      listing.totalBytes += info.size;
    } else {
      listing.skipped.push(`${path} (not a regular file)`);
    }
  }
}

function isExcluded(path: string, rules: Rules[]): boolean {
  if (ALWAYS_EXCLUDED.ignores(path)) return true;
  // Like git: a deeper file's patterns override shallower ones, negations included.
  let ignored = false;
  for (const { base, matcher } of rules) {
    const relative = base ? path.slice(base.length + 1) : path;
    const result = matcher.test(relative);
    if (result.ignored) ignored = true;
    else if (result.unignored) ignored = false;
  }
  return ignored;
}

/** An excluded folder is still walked when an --include pattern reaches inside it. */
function mayIncludeBelow(dir: string, includes: string[]): boolean {
  return includes.some((pattern) => pattern.replace(/^\//, '').startsWith(`${dir}/`) || pattern.startsWith('**'));
}
