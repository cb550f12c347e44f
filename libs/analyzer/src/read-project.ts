import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProjectFile } from './types.js';

const TEXT_EXTENSIONS = /\.(m?[jt]sx?|cjs|cts|mts|json|html?|css|txt|md|ya?ml|toml|env|map|svg|vue|svelte|astro|xml|ini|conf|sh|lock)$/i;
/** Files worth reading as text: known text extensions and dotfiles like `.env`, up to this size. */
export const MAX_TEXT_BYTES = 1024 * 1024;

function isTextCandidate(path: string): boolean {
  const base = path.slice(path.lastIndexOf('/') + 1);
  return TEXT_EXTENSIONS.test(base) || base.startsWith('.env') || base === '.nvmrc' || base === '.node-version' || !base.includes('.');
}

/**
 * Lists every regular file under `root` (symlinks are not followed). Text is read for small text
 * files, except under `node_modules/` and `.git/` whose contents are never analysed.
 */
export async function readProjectDir(root: string, options: { skipDirs?: string[] } = {}): Promise<ProjectFile[]> {
  const files: ProjectFile[] = [];
  const skip = new Set(options.skipDirs ?? []);
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
        const opaque = rel.startsWith('node_modules/') || rel.includes('/node_modules/') || rel.startsWith('.git/');
        const file: ProjectFile = { path: rel, bytes: size };
        if (!opaque && size <= MAX_TEXT_BYTES && isTextCandidate(rel)) file.text = await readFile(abs, 'utf8');
        files.push(file);
      }
    }
  }
  await walk(root, '');
  return files;
}
