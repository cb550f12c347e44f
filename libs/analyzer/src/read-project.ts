import { constants } from 'node:fs';
import { open, readdir, readFile, realpath, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import type { ProjectFile } from './types.js';

const TEXT_EXTENSIONS = /\.(m?[jt]sx?|cjs|cts|mts|json|html?|css|txt|md|ya?ml|toml|env|map|svg|vue|svelte|astro|xml|ini|conf|sh|lock)$/i;
/** Files worth reading as text: known text extensions and dotfiles like `.env`, up to this size. */
export const MAX_TEXT_BYTES = 1024 * 1024;

function isTextCandidate(path: string): boolean {
  const base = path.slice(path.lastIndexOf('/') + 1);
  return TEXT_EXTENSIONS.test(base) || base.startsWith('.env') || base === '.nvmrc' || base === '.node-version' || !base.includes('.');
}

/**
 * Lists every regular file under `root`, text read for small text files except under
 * `node_modules/` and `.git/` (never analysed). A symbolic link to a regular file inside `root`
 * is listed under its own path with its target's size and text, so `CLAUDE.md -> AGENTS.md` or a
 * linked `slipway.json` reads as the file it names (it is what a build or the edge will see there).
 * Links to folders are not walked (their files are listed once, where they are), and links
 * leading out of `root`, nowhere or in a loop are left out: nothing outside `root` is read.
 */
export async function readProjectDir(root: string, options: { skipDirs?: string[] } = {}): Promise<ProjectFile[]> {
  const files: ProjectFile[] = [];
  const skip = new Set(options.skipDirs ?? []);
  const realRoot = await realpath(root);
  async function walk(dir: string, prefix: string): Promise<void> {
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const entry of entries) {
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      const abs = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!skip.has(rel)) await walk(abs, rel);
      } else if (entry.isFile()) {
        const { size } = await stat(abs);
        const file: ProjectFile = { path: rel, bytes: size };
        if (worthReading(rel, size)) file.text = await readFile(abs, 'utf8');
        files.push(file);
      } else if (entry.isSymbolicLink()) {
        const linked = await linkedFile(realRoot, abs, rel);
        if (linked) files.push(linked);
      }
    }
  }
  await walk(root, '');
  return files;
}

function worthReading(path: string, size: number): boolean {
  const opaque = path.startsWith('node_modules/') || path.includes('/node_modules/') || path.startsWith('.git/');
  return !opaque && size <= MAX_TEXT_BYTES && isTextCandidate(path);
}

/** The regular file the link at `abs` leads to, as the file `path`; null unless it is one inside `realRoot`. */
async function linkedFile(realRoot: string, abs: string, path: string): Promise<ProjectFile | null> {
  const target = await realpath(abs).catch(() => null);
  if (!target || !target.startsWith(realRoot + sep)) return null;
  // The real path has no link left in it; O_NOFOLLOW keeps it that way for the last component.
  const handle = await open(target, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => null);
  if (!handle) return null;
  try {
    const info = await handle.stat();
    if (!info.isFile()) return null;
    const file: ProjectFile = { path, bytes: info.size };
    if (worthReading(path, info.size)) file.text = await handle.readFile('utf8');
    return file;
  } finally {
    await handle.close();
  }
}
