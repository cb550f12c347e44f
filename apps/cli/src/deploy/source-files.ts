import { lstat, readdir, readFile, readlink, realpath } from 'node:fs/promises';
import { isAbsolute, join, posix, relative, resolve, sep } from 'node:path';
import { LIMITS, SourceLinks, linkTargetProblem } from '@slipway/contract';
import ignore, { type Ignore } from 'ignore';
import { UsageError } from '../args.js';

export interface SourceFile {
  /** Relative, `/`-separated path inside the archive. */
  path: string;
  absolute: string;
  size: number;
  mode: number;
  /** Set for a symbolic link: its relative target, sent as a link (size 0). */
  link?: string;
}

export interface SourceListing {
  /** Regular files and symbolic links, sorted by path. */
  files: SourceFile[];
  totalBytes: number;
  /** Entries that are not sent: sockets, FIFOs, devices (shown with --verbose). */
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
 *
 * A symbolic link is sent as a link (to a file or a folder alike; ignore rules see it as a file,
 * as git does) when it stays inside the project by the platform's rule (libs/contract
 * `source-links.ts`), judged on what is sent; an absolute target inside the project is sent as
 * the equivalent relative one. Any other link refuses the deploy before a byte is sent
 * (`UsageError` listing every such link and what to do), rather than being left out silently or
 * followed to something outside the project.
 */
export async function listSourceFiles(root: string, includes: string[] = []): Promise<SourceListing> {
  const include = ignore().add(includes);
  const listing: SourceListing = { files: [], totalBytes: 0, skipped: [] };
  await walk(root, '', [], include, includes, listing);
  listing.files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  await checkLinks(root, listing.files);
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
    const info = await lstat(absolute);
    if (info.isSymbolicLink()) {
      if (include.ignores(path) || !isExcluded(path, rules)) listing.files.push({ path, absolute, size: 0, mode: 0o777, link: await readlink(absolute) });
      continue;
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

/**
 * Makes every link's target relative and checks it: the same rule the gateway applies, on the
 * tree that is sent (a link into an ignored folder is judged as one into a folder that does not
 * exist there, which is what the build sees).
 */
async function checkLinks(root: string, files: SourceFile[]): Promise<void> {
  const links = files.filter((file) => file.link !== undefined);
  if (links.length === 0) return;
  const roots = [...new Set([resolve(root), await realpath(root)])];
  const problems: string[] = [];
  for (const file of links) {
    const target = file.link!.normalize('NFC');
    file.link = isAbsolute(target) ? (relativeInside(roots, file.path, target) ?? target) : target;
  }
  const resolver = new SourceLinks(new Map(links.map((file) => [file.path, file.link!])), LIMITS.upload);
  for (const file of links) {
    const syntax = linkTargetProblem(file.link!, LIMITS.upload);
    const kind = syntax ? null : resolver.resolve(file.path).kind;
    const why =
      syntax === 'has an absolute target' || kind === 'outside'
        ? 'leads outside the project'
        : kind === 'loop'
          ? 'is in a loop of links'
          : kind === 'too_complex'
            ? 'cannot be checked (the links take too many steps to follow)'
            : syntax;
    if (why) problems.push(`${file.path} -> ${file.link}: ${why}`);
  }
  if (problems.length === 0) return;
  throw new UsageError(
    [
      `${problems.length === 1 ? 'a symbolic link' : `${problems.length} symbolic links`} cannot be sent: Slipway keeps links only when they stay inside the project folder`,
      ...problems.map((problem) => `  ${problem}`),
      'Replace such a link with a copy of what it points to, or leave it out with .slipwayignore.',
    ].join('\n'),
  );
}

/** An absolute target inside the project (as given, or through its real path) as a relative one from the link's folder; null otherwise. */
function relativeInside(roots: string[], linkPath: string, target: string): string | null {
  for (const root of roots) {
    if (target !== root && !target.startsWith(root + sep)) continue;
    const inProject = relative(root, target).split(sep).join('/');
    return posix.relative(posix.dirname(linkPath), inProject) || '.';
  }
  return null;
}
