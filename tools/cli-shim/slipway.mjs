#!/usr/bin/env node
// `pnpm slipway …` in the repo. A root package.json script would do, but pnpm prints its
// "> slipway@0.1.0 slipway …" banner on stdout before any script runs, which breaks
// `pnpm slipway … --json | jq`; a bin that pnpm falls back to prints nothing of its own.
// The CLI is built first (Nx's output goes to stderr), then run from the repo root as the script did.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const nx = join(root, 'node_modules', '.bin', 'nx');
const built = spawnSync(nx, ['run', 'cli:build', '--output-style=static'], { cwd: root, stdio: ['ignore', 2, 2] });
if (built.error || built.status !== 0) {
  process.stderr.write(`slipway: building the CLI failed${built.error ? `: ${built.error.message}` : ` (exit ${built.status ?? built.signal})`}\n`);
  process.exit(1);
}
process.chdir(root);
await import(pathToFileURL(join(root, 'apps', 'cli', 'dist', 'main.js')).href);
