// Memory and throughput of `slipway deploy`'s streamed upload: the built CLI uploads folders of
// growing size (incompressible files) to a local sink that drains the body and answers 202.
// Peak RSS must stay flat as the folder grows: the archive is never held in memory.
// Run: pnpm nx build cli && node bench/cli-upload/run.mjs [sizesInMiB...]
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../apps/cli/dist/main.js', import.meta.url));
const sizes = process.argv.slice(2).map(Number).filter(Boolean);
const MiB = 1024 * 1024;

const received = { bytes: 0 };
const server = createServer((req, res) => {
  req.on('data', (chunk) => (received.bytes += chunk.length));
  req.on('end', () => {
    res.writeHead(202, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ taskId: '00000000-0000-4000-8000-000000000000', status: 'queued' }));
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${server.address().port}`;

async function folder(mib) {
  const dir = await mkdtemp(join(tmpdir(), 'slipway-bench-upload-'));
  await mkdir(join(dir, 'data'));
  for (let i = 0; i < mib; i++) await writeFile(join(dir, 'data', `f${i}.bin`), randomBytes(MiB));
  return dir;
}

async function peakRss(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

const rows = [];
for (const mib of sizes.length ? sizes : [16, 64, 256]) {
  const dir = await folder(mib);
  received.bytes = 0;
  const started = process.hrtime.bigint();
  const child = spawn('node', [CLI, 'deploy', dir, '--no-wait', '--json'], {
    env: { PATH: process.env.PATH, SLIPWAY_URL: url, SLIPWAY_API_KEY: 'slw_key_bench' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let peak = 0;
  const sampler = setInterval(async () => (peak = Math.max(peak, await peakRss(child.pid))), 25);
  const code = await new Promise((r) => child.on('close', r));
  clearInterval(sampler);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  rows.push({
    'folder MiB': mib,
    exit: code,
    'sent MiB': (received.bytes / MiB).toFixed(1),
    seconds: seconds.toFixed(2),
    'MiB/s': (mib / seconds).toFixed(1),
    'peak RSS MiB': (peak / MiB).toFixed(1),
  });
  await rm(dir, { recursive: true, force: true });
}
server.close();
console.table(rows);
