import { lstat, mkdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { PackageJson, ProjectSpec } from '@slipway/analyzer';
import { realDirectory } from './build-caches.js';

/**
 * Next.js started with `next start` is built with its standalone output (`NEXT_PRIVATE_STANDALONE`,
 * what `output: 'standalone'` sets; a project that sets another `output` keeps it): `next build`
 * traces what the server needs into `.next/standalone` (server.js, the config already compiled,
 * only the dependencies it uses), so the release carries neither dev dependencies, nor the build
 * toolchain (SWC binaries), nor `next.config.ts`'s TypeScript. A custom server keeps its own start.
 */
export function nextStandaloneBuildEnv(spec: ProjectSpec, pkg: PackageJson | null): Record<string, string> {
  if (spec.framework !== 'next' || spec.overrides.includes('startCommand')) return {};
  // A monorepo's application starts in its own directory (`cd apps/web && …`).
  const start = spec.startSource === 'script' ? (pkg?.scripts?.['start'] ?? '') : (spec.commands.start ?? '').replace(/^cd \S+ && /, '');
  return /^(npx (--no-install )?)?next start\s*$/.test(start.trim()) ? { NEXT_PRIVATE_STANDALONE: 'true' } : {};
}

/**
 * Where `next build` put the standalone server, relative to `.next/standalone`: `server.js`, or, in
 * a monorepo (Next.js traces from the workspace's root), `<rootDirectory>/server.js`; null: none
 * (every component a real directory, the file a real file).
 */
async function standaloneServer(appDir: string, rootDirectory: string | undefined): Promise<string | null> {
  for (const sub of rootDirectory ? [rootDirectory, ''] : ['']) {
    const dir = await realDirectory(appDir, sub ? `.next/standalone/${sub}` : '.next/standalone');
    if (dir && (await lstat(join(dir, 'server.js')).catch(() => null))?.isFile()) return sub;
  }
  return null;
}

/** Whether the build produced the standalone server (see `standaloneServer`). */
export async function hasNextStandalone(appDir: string, rootDirectory?: string): Promise<boolean> {
  return (await standaloneServer(appDir, rootDirectory)) !== null;
}

/**
 * Completes the standalone output as `next build` leaves it to the deployer: `.next/static` and
 * `public` moved (renamed, not copied) next to its server.js. Returns the release's root directory
 * and the command that starts it.
 */
export async function assembleNextStandalone(src: string, rootDirectory?: string): Promise<{ root: string; start: string }> {
  const appDir = rootDirectory ? await realDirectory(src, rootDirectory) : src;
  const sub = appDir === null ? null : await standaloneServer(appDir, rootDirectory);
  if (appDir === null || sub === null) throw new Error('the standalone output has no server.js');
  const root = join(appDir, '.next', 'standalone');
  const server = sub ? join(root, sub) : root;
  const staticDir = await realDirectory(appDir, '.next/static');
  if (staticDir && !(await lstat(join(server, '.next', 'static')).catch(() => null))) {
    await mkdir(join(server, '.next'), { recursive: true });
    if (!(await realDirectory(root, sub ? `${sub}/.next` : '.next'))) throw new Error('.next/standalone/.next is not a directory');
    await rename(staticDir, join(server, '.next', 'static'));
  }
  const publicDir = await realDirectory(appDir, 'public');
  if (publicDir && !(await lstat(join(server, 'public')).catch(() => null))) await rename(publicDir, join(server, 'public'));
  return { root, start: sub ? `node ${sub}/server.js` : 'node server.js' };
}
