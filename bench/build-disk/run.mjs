// Build disk: what a fixed-size disk per build costs. Times (median of RUNS) making and mounting
// a BUILD_DISK_MB image (sparse file, mkfs.ext4 without a journal, loop mount), and releasing it
// (umount + deleting the image) right after a Next.js-sized workspace (FILES small files in
// nested directories plus BIG_MB in one file) was written on it, against `rm -rf` of the same
// tree on the host's file system (what the workspace trash does in the background).
//   pnpm nx build build-worker && node bench/build-disk/run.mjs      (as root)
// BUILD_DISK_MB (4096), FILES (25000), BIG_MB (256), RUNS (5).
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BuildDisks } from '../../apps/build-worker/dist/pipeline/build-disk.js';

const run = promisify(execFile);
const RUNS = Number(process.env.RUNS ?? 5);
const SIZE_MB = Number(process.env.BUILD_DISK_MB ?? 4096);
const FILES = Number(process.env.FILES ?? 25_000);
const BIG_MB = Number(process.env.BIG_MB ?? 256);

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
async function timed(fn) {
  const started = process.hrtime.bigint();
  const value = await fn();
  return [Number(process.hrtime.bigint() - started) / 1e6, value];
}

/** A workspace like a Next.js app's: FILES small files, 50 a directory, and one big file. */
async function workspace(dir) {
  const content = Buffer.alloc(3000, 'x');
  for (let d = 0; d < FILES / 50; d++) {
    const sub = join(dir, 'node_modules', `p${d}`, 'lib');
    await mkdir(sub, { recursive: true });
    await Promise.all(Array.from({ length: 50 }, (_, f) => writeFile(join(sub, `f${f}.js`), content)));
  }
  await writeFile(join(dir, 'big.bin'), Buffer.alloc(BIG_MB * 1024 * 1024, 1));
}

if (process.getuid?.() !== 0) {
  console.error('bench/build-disk: run as root (loop mounts)');
  process.exit(1);
}
const base = await mkdtemp(join(tmpdir(), 'bench-build-disk-'));
const disks = new BuildDisks({ imagesDir: join(base, 'disks'), workspacesDir: join(base, 'workspaces'), sizeBytes: SIZE_MB * 1024 * 1024 });
const figures = { mount: [], releaseEmpty: [], release: [], rm: [] };
try {
  for (let i = 0; i < RUNS; i++) {
    const [mountMs, empty] = await timed(() => disks.mount(`empty-${i}`));
    figures.mount.push(mountMs);
    figures.releaseEmpty.push((await timed(() => empty.release()))[0]);

    const disk = await disks.mount(`full-${i}`);
    await workspace(join(disk.root, 'src'));
    figures.release.push((await timed(() => disk.release()))[0]);

    const plain = join(base, `plain-${i}`);
    await workspace(plain);
    figures.rm.push((await timed(() => run('rm', ['-rf', '--one-file-system', plain])))[0]);
  }
  const row = (name, values) => `| ${name} | ${Math.round(median(values))} | ${Math.round(Math.min(...values))}–${Math.round(Math.max(...values))} |`;
  console.log(`build disk ${SIZE_MB} MiB; workspace ${FILES} files + ${BIG_MB} MiB; ${RUNS} runs`);
  console.log('| what | median ms | range ms |');
  console.log('|---|---|---|');
  console.log(row('make + mount (sparse file, mkfs.ext4, mount -o loop)', figures.mount));
  console.log(row('release, empty (umount + delete image)', figures.releaseEmpty));
  console.log(row('release after the workspace was written', figures.release));
  console.log(row('rm -rf of the same workspace on the host fs', figures.rm));
} finally {
  await disks.sweep().catch(() => undefined);
  for (const name of ['disks', 'workspaces']) await rm(join(base, name), { recursive: true, force: true }).catch(() => undefined);
  await rm(base, { recursive: true, force: true });
}
