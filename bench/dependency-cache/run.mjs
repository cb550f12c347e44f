// Dependency cache: what a hit costs. Installs a real project from the npm registry once, then
// times (median of RUNS) the old restore (`cp -a`, unverified), the new save (copy + sha256 of
// every file + sealed manifest) and the new restore (verified copy), and `npm ci` with a warm
// npm cache for comparison (what a miss costs).
//   pnpm nx build build-worker && node bench/dependency-cache/run.mjs
// BENCH_PACKAGES="vite react …" picks the project; RUNS (5).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DependencyCache } from '../../apps/build-worker/dist/pipeline/dependency-cache.js';

const run = promisify(execFile);
const RUNS = Number(process.env.RUNS ?? 5);
const PACKAGES = (process.env.BENCH_PACKAGES ?? 'vite react react-dom @vitejs/plugin-react typescript eslint jest').split(/\s+/);

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
async function timed(fn) {
  const started = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

const base = await mkdtemp(join(tmpdir(), 'bench-depcache-'));
try {
  const project = join(base, 'project');
  await mkdir(project);
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'bench', private: true }));
  const npmCache = join(base, 'npm-cache');
  const npmEnv = { ...process.env, npm_config_cache: npmCache, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
  process.stderr.write(`npm install ${PACKAGES.join(' ')} …\n`);
  await run('npm', ['install', ...PACKAGES], { cwd: project, env: npmEnv, maxBuffer: 64 * 1024 * 1024 });
  const files = Number((await run('sh', ['-c', 'find node_modules -type f | wc -l'], { cwd: project })).stdout.trim());
  const bytes = Number((await run('du', ['-sb', 'node_modules'], { cwd: project })).stdout.split('\t')[0]);

  const cache = new DependencyCache({
    root: join(base, 'cache'),
    downloads: join(base, 'downloads'),
    masterKey: randomBytes(32).toString('base64'),
    maxBytes: 8 * 1024 ** 3,
  });
  const owner = { uid: process.getuid(), gid: process.getgid() };
  const rows = { 'old restore: cp -a (unverified)': [], 'new save: copy + sha256 + seal': [], 'new restore: verified copy': [], 'npm ci (warm npm cache)': [] };
  let key;
  for (let i = 0; i < RUNS; i++) {
    const dest = join(base, `old-${i}`);
    await mkdir(dest);
    rows['old restore: cp -a (unverified)'].push(await timed(() => run('cp', ['-a', join(project, 'node_modules'), join(dest, 'node_modules')])));
    await rm(dest, { recursive: true, force: true });

    await rm(join(base, 'cache'), { recursive: true, force: true });
    key = await cache.keyFor('bench-app', project, 'package-lock.json', 'npm');
    let saved;
    rows['new save: copy + sha256 + seal'].push(await timed(async () => (saved = await cache.save(key, project))));
    if (!saved.saved) throw new Error(`not cached: ${saved.reason}`);

    const target = join(base, `new-${i}`);
    await mkdir(target);
    let restored;
    rows['new restore: verified copy'].push(await timed(async () => (restored = await cache.restore(key, target, owner))));
    if (!restored.hit) throw new Error(`no hit: ${restored.reason}`);
    await rm(target, { recursive: true, force: true });
  }
  for (let i = 0; i < Math.min(RUNS, 3); i++) {
    await rm(join(project, 'node_modules'), { recursive: true, force: true });
    rows['npm ci (warm npm cache)'].push(await timed(() => run('npm', ['ci', '--prefer-offline'], { cwd: project, env: npmEnv, maxBuffer: 64 * 1024 * 1024 })));
  }

  console.log(`\nnode_modules of \`${PACKAGES.join(' ')}\`: ${files} files, ${(bytes / 1024 ** 2).toFixed(0)} MiB (median of ${RUNS} runs)\n`);
  console.log('| operation | ms |');
  console.log('|---|---|');
  for (const [name, values] of Object.entries(rows)) console.log(`| ${name} | ${median(values).toFixed(0)} |`);
} finally {
  await run('chmod', ['-R', 'u+w', base]).catch(() => undefined);
  await rm(base, { recursive: true, force: true });
}
