import { cp, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURES } from '@slipway/testing';

/** A copy of a fixture in a temp folder, with files replaced (the CLI deploys folders). */
export async function fixtureDir(fixture: string, extra: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `slipway-faults-src-`));
  await cp(join(FIXTURES, fixture), dir, { recursive: true });
  for (const [path, content] of Object.entries(extra)) await writeFile(join(dir, path), content);
  return dir;
}

/** The vite-spa fixture with a real dependency and an install that takes a few seconds. */
export function slowInstallDir(seconds = 6): Promise<string> {
  const pkg = {
    name: 'slow-install',
    private: true,
    type: 'module',
    scripts: { preinstall: `node -e "console.log('preinstall started'); setTimeout(() => {}, ${seconds * 1000})"`, build: 'node build.mjs' },
    dependencies: { 'escape-html': '1.0.3' },
  };
  return fixtureDir('vite-spa', { 'package.json': JSON.stringify(pkg, null, 2) });
}
