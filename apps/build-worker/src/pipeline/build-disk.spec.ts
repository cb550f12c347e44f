import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { BuildDisk, BuildDiskUnavailable, BuildDisks, MAX_RELEASING } from './build-disk.js';

const MiB = 1024 * 1024;
const root = process.getuid?.() === 0;
const tools = ['mkfs.ext4', 'mount', 'umount'].every((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0);
const canMount = root && tools && existsSync('/dev/loop-control');
if (!canMount) {
  // Said once, loudly: these tests need what the worker needs (root, loop devices, e2fsprogs).
  console.warn(
    `build-disk.spec: skipped: ${!root ? 'not running as root' : !tools ? 'mkfs.ext4/mount/umount missing (apt-get install -y e2fsprogs mount)' : 'no /dev/loop-control (modprobe loop)'}`,
  );
}
const describeMounted = canMount ? describe : describe.skip;

function mountedAt(target: string): string | null {
  const line = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .find((entry) => entry.split(' ')[4] === target);
  return line ?? null;
}

function tagOf(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return `${pid}-${stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]}`;
}

describeMounted('BuildDisks (real ext4 images, real loop mounts, as root)', () => {
  let base: string;
  let disks: BuildDisks;
  const left: BuildDisk[] = [];

  beforeEach(async () => {
    base = await mkdtemp(join(tmpdir(), 'build-disk-'));
    disks = new BuildDisks({ imagesDir: join(base, 'disks'), workspacesDir: join(base, 'workspaces'), sizeBytes: 64 * MiB });
  });
  afterEach(async () => {
    for (const disk of left.splice(0)) await disk.release().catch(() => undefined);
    await disks.sweep().catch(() => undefined);
    await rm(base, { recursive: true, force: true });
  });

  it('mounts a fresh, sparse, fixed-size file system (nosuid, nodev) owned by the build user at the workspace', async () => {
    const disk = await disks.mount('d1-1', { uid: 65534, gid: 65534 });
    left.push(disk);
    expect(disk.root).toBe(join(base, 'workspaces', 'd1-1'));
    const line = mountedAt(disk.root);
    expect(line).toMatch(/ nosuid,nodev,noatime | [^ ]*nosuid[^ ]*nodev/);
    expect(line).toMatch(/ - ext4 \/dev\/loop\d+ /);
    expect((await stat(disk.root)).uid).toBe(65534);
    const usage = await disk.usage();
    expect(usage.sizeBytes).toBeGreaterThan(48 * MiB);
    expect(usage.sizeBytes).toBeLessThanOrEqual(64 * MiB);
    expect(usage.freeInodes).toBeGreaterThan(10_000);
    // Sparse: the image takes (almost) nothing on the host until the build writes.
    expect((await stat(disk.image)).blocks * 512).toBeLessThan(16 * MiB);
    expect(await disk.full()).toBeNull();
  });

  it('stops a write past the budget with ENOSPC, knows it is full, and returns the space when released', async () => {
    const disk = await disks.mount('d2-1');
    left.push(disk);
    const watch = disk.watch();
    const error = await writeFile(join(disk.root, 'zeros'), Buffer.alloc(100 * MiB)).catch((e: NodeJS.ErrnoException) => e);
    expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
    const full = await disk.full();
    expect(full).not.toBeNull();
    expect(disk.exceededMessage('`npm run build`', full!)).toMatch(/^`npm run build` filled the build disk: it wrote \d+ MiB of the 64 MiB a build may use/);
    const { peakBytes } = await watch.stop();
    expect(peakBytes).toBeGreaterThan(48 * MiB);
    expect(BuildDisk.describe(peakBytes, full, disk.sizeBytes)).toMatch(/^build disk: \d+ MiB used of 64 MiB \(peak \d+ MiB\), \d+ files$/);
    await disk.release();
    expect(mountedAt(disk.root)).toBeNull();
    expect(existsSync(disk.image)).toBe(false);
    expect(existsSync(disk.root)).toBe(false);
    // Released twice (a finally after a failure) is fine.
    await disk.release();
  });

  it('releases finished disks in the background, at most MAX_RELEASING at once', async () => {
    const mounted = [];
    for (let i = 0; i < MAX_RELEASING + 1; i++) {
      const disk = await disks.mount(`r${i}-1`);
      await writeFile(join(disk.root, 'data'), Buffer.alloc(8 * MiB, 1));
      mounted.push(disk);
    }
    const errors: Error[] = [];
    for (const disk of mounted) await disks.retire(disk, (error) => errors.push(error));
    await disks.drained();
    expect(errors).toEqual([]);
    for (const disk of mounted) expect([mountedAt(disk.root), existsSync(disk.image)]).toEqual([null, false]);
  });

  it('counts a disk whose inodes are used up as full', async () => {
    const small = new BuildDisks({ ...disks.options, sizeBytes: 16 * MiB });
    const disk = await small.mount('d3-1');
    left.push(disk);
    let failure: NodeJS.ErrnoException | undefined;
    for (let i = 0; i < 10_000 && !failure; i++) await writeFile(join(disk.root, `f${i}`), '').catch((e: NodeJS.ErrnoException) => (failure = e));
    expect(failure?.code).toBe('ENOSPC');
    expect((await disk.full())?.freeInodes).toBe(0);
  });

  it('starts clean when an earlier try of the same attempt left its workspace mounted', async () => {
    const first = await disks.mount('d4-1');
    await writeFile(join(first.root, 'left'), 'x');
    const second = await disks.mount('d4-1');
    left.push(second);
    expect(await readdir(second.root)).toEqual([]);
    // One image: the first one's space went with it.
    expect(await readdir(join(base, 'disks'))).toEqual([basename(second.image)]);
  });

  it('sweeps the disks of a worker that is gone (kill -9), never those of a live one', async () => {
    const owner = spawn('sleep', ['600'], { stdio: 'ignore' });
    const gone = tagOf(owner.pid!);
    const image = join(base, 'disks', `d5-1.${gone}.img`);
    const target = join(base, 'workspaces', 'd5-1');
    await mkdir(join(base, 'disks'), { recursive: true });
    await mkdir(target, { recursive: true });
    execFileSync('truncate', ['-s', '32M', image]);
    execFileSync('mkfs.ext4', ['-q', '-F', '-O', '^has_journal', image]);
    execFileSync('mount', ['-o', 'loop,nosuid,nodev', image, target]);
    const mine = await disks.mount('d6-1');
    left.push(mine);
    // An image of ours that never got mounted (a worker killed between mkfs and mount).
    await writeFile(join(base, 'disks', 'd7-1.999999999-1.img'), '');

    // While its worker lives, its disk stays; the unmounted image of a gone worker goes.
    expect(await disks.sweep()).toEqual({ unmounted: [], removed: ['d7-1.999999999-1.img'] });
    expect(mountedAt(target)).not.toBeNull();

    owner.kill('SIGKILL');
    await new Promise((resolve) => owner.once('exit', resolve));
    const swept = await disks.sweep();
    expect(swept.unmounted).toEqual([target]);
    expect(swept.removed).toEqual([`d5-1.${gone}.img`]);
    expect(mountedAt(target)).toBeNull();
    expect(existsSync(image)).toBe(false);
    // This worker's own disk is untouched.
    expect(mountedAt(mine.root)).not.toBeNull();
    expect(existsSync(mine.image)).toBe(true);
  });

  it('fails closed, saying how to fix it, when the image cannot be made', async () => {
    // Where images go is taken by a file: nothing can be made there.
    await writeFile(join(base, 'disks'), '');
    const error = await disks.mount('d8-1').catch((e: Error) => e);
    expect(error).toBeInstanceOf(BuildDiskUnavailable);
    expect((error as Error).message).toMatch(/^the build's disk could not be made \(.*EEXIST.*\): run the build worker as root .* or set BUILD_DISK_MB=0/s);
    expect(mountedAt(join(base, 'workspaces', 'd8-1'))).toBeNull();
  });
});
