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
  const start = spec.startSource === 'script' ? pkg?.scripts?.['start'] ?? '' : spec.commands.start ?? '';
  return /^(npx (--no-install )?)?next start\s*$/.test(start.trim()) ? { NEXT_PRIVATE_STANDALONE: 'true' } : {};
}

/** Whether the build produced `.next/standalone/server.js` (every component a real directory, the file a real file). */
export async function hasNextStandalone(src: string): Promise<boolean> {
  const dir = await realDirectory(src, '.next/standalone');
  return Boolean(dir && (await lstat(join(dir, 'server.js')).catch(() => null))?.isFile());
}

/**
 * Completes the standalone output as `next build` leaves it to the deployer: `.next/static` and
 * `public` moved (renamed, not copied) into it. Returns the release's root directory.
 */
export async function assembleNextStandalone(src: string): Promise<string> {
  const root = join(src, '.next', 'standalone');
  const staticDir = await realDirectory(src, '.next/static');
  if (staticDir && !(await lstat(join(root, '.next', 'static')).catch(() => null))) {
    await mkdir(join(root, '.next'), { recursive: true });
    if (!(await realDirectory(src, '.next/standalone/.next'))) throw new Error('.next/standalone/.next is not a directory');
    await rename(staticDir, join(root, '.next', 'static'));
  }
  const publicDir = await realDirectory(src, 'public');
  if (publicDir && !(await lstat(join(root, 'public')).catch(() => null))) await rename(publicDir, join(root, 'public'));
  return root;
}
