import { constants } from 'node:fs';
import { mkdir, open, readFile, readdir, rm, rmdir, statfs, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { runDetached } from '../sandbox/run-detached.js';

/** Inodes of a build disk: a Next.js workspace holds ~25 000 files, its dependency cache and caches as many again. */
const MIN_INODES = 131_072;
/** Below this much free space (or no free inode) the disk counts as full: a write that failed with ENOSPC leaves a few blocks. */
const FULL_MARGIN_BYTES = 8 * 1024 * 1024;
/** Disks being released at once beyond which `retire` waits (deployments may not outrun the releases). */
export const MAX_RELEASING = 2;
/** How often a running command's disk use is sampled for its peak. */
const SAMPLE_MS = 500;

const FIX =
  'run the build worker as root on a machine with loop devices (`modprobe loop`; in a container: --privileged or the loop devices and CAP_SYS_ADMIN) and e2fsprogs (`apt-get install -y e2fsprogs`), or set BUILD_DISK_MB=0 to build without a disk budget (every deploy then carries the unbounded_build_disk hazard)';

/** The build disk could not be made or mounted: the deploy fails with `sandbox_unavailable`. */
export class BuildDiskUnavailable extends Error {
  override readonly name = 'BuildDiskUnavailable';
  constructor(why: string) {
    super(`the build's disk could not be made (${why}): ${FIX}`);
  }
}

export interface DiskUsage {
  usedBytes: number;
  sizeBytes: number;
  freeBytes: number;
  usedInodes: number;
  freeInodes: number;
}

/** This process's identity that survives pid reuse: pid and start time (clock ticks since boot). */
async function processTag(pid: number): Promise<string | null> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (!stat) return null;
  // Field 22 (starttime), counted after the command name, which may hold spaces and parentheses.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return `${pid}-${fields[19]}`;
}

async function ownerAlive(tag: string): Promise<boolean> {
  const pid = Number(tag.split('-')[0]);
  return Number.isInteger(pid) && pid > 0 && (await processTag(pid)) === tag;
}

/** `\040` and friends in /proc mount tables. */
function unescapeMount(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** Mount points of this mount namespace, each with its source device. */
async function mounts(): Promise<{ target: string; source: string }[]> {
  const table = await readFile('/proc/self/mountinfo', 'utf8');
  return table
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [left, right = ''] = line.split(' - ');
      return { target: unescapeMount(left!.split(' ')[4] ?? ''), source: unescapeMount(right.split(' ')[1] ?? '') };
    });
}

/** The image file behind a loop device (`/dev/loop3`), without the kernel's ` (deleted)` mark. */
async function backingFile(device: string): Promise<string | null> {
  const name = /^\/dev\/(loop\d+)$/.exec(device)?.[1];
  if (!name) return null;
  const file = await readFile(`/sys/block/${name}/loop/backing_file`, 'utf8').catch(() => null);
  return file ? file.trim().replace(/ \(deleted\)$/, '') : null;
}

/** Bytes as a person reads them in a step log. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
  return bytes >= 1024 ** 2 ? `${Math.round(bytes / 1024 ** 2)} MiB` : `${bytes} bytes`;
}
const format = formatBytes;

/**
 * One build's disk: a fixed-size ext4 file system in a sparse image file, loop-mounted
 * (`nosuid,nodev`) at the attempt's workspace root. Everything a build writes on disk (the source,
 * `node_modules`, the package managers' download cache at `/cache`, the output) lands there, so the
 * kernel stops it at the budget with ENOSPC. Unmounting and deleting the image returns the space at once.
 */
export class BuildDisk {
  private released = false;

  constructor(
    readonly root: string,
    readonly image: string,
    readonly sizeBytes: number,
  ) {}

  async usage(): Promise<DiskUsage> {
    const info = await statfs(this.root, { bigint: false });
    return {
      sizeBytes: info.blocks * info.bsize,
      usedBytes: (info.blocks - info.bfree) * info.bsize,
      freeBytes: info.bavail * info.bsize,
      usedInodes: info.files - info.ffree,
      freeInodes: info.ffree,
    };
  }

  /** Whether the disk is (as good as) full: after a command failed, the budget is why. */
  async full(): Promise<DiskUsage | null> {
    const usage = await this.usage().catch(() => null);
    return usage && (usage.freeBytes < Math.max(FULL_MARGIN_BYTES, usage.sizeBytes / 200) || usage.freeInodes === 0) ? usage : null;
  }

  /** Samples the disk's use until `stop()`, which returns the peak and the use now. */
  watch(): { stop(): Promise<{ peakBytes: number; usage: DiskUsage | null }> } {
    let peakBytes = 0;
    const sample = () =>
      this.usage().then(
        (usage) => (peakBytes = Math.max(peakBytes, usage.usedBytes)),
        () => undefined,
      );
    void sample();
    const timer = setInterval(() => void sample(), SAMPLE_MS);
    return {
      stop: async () => {
        clearInterval(timer);
        const usage = await this.usage().catch(() => null);
        return { peakBytes: Math.max(peakBytes, usage?.usedBytes ?? 0), usage };
      },
    };
  }

  /** The step log's line: what the command left on the disk and its peak. */
  static describe(peakBytes: number, usage: DiskUsage | null, sizeBytes: number): string {
    return `build disk: ${format(usage?.usedBytes ?? 0)} used of ${format(sizeBytes)} (peak ${format(peakBytes)}), ${usage?.usedInodes ?? 0} files`;
  }

  /** The deploy's failure message once the disk is full. */
  exceededMessage(what: string, usage: DiskUsage): string {
    const files = usage.freeInodes === 0 ? ` and all ${usage.usedInodes} files it may hold` : '';
    return `${what} filled the build disk: it wrote ${format(usage.usedBytes)}${files} of the ${format(this.sizeBytes)} a build may use (BUILD_DISK_MB) and was stopped by the kernel (no space left on device)`;
  }

  /** Unmounts the disk and deletes its image (the space is back at once). Idempotent. */
  async release(): Promise<void> {
    if (this.released) return;
    await unmount(this.root);
    await unlink(this.image).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
    await rmdir(this.root).catch(() => undefined);
    this.released = true;
  }
}

/** Unmounts `target`; a busy one (an open file somewhere) is detached now and freed by the kernel when closed. */
async function unmount(target: string): Promise<void> {
  if (!(await mounts()).some((mount) => mount.target === target)) return;
  const plain = await runDetached('umount', [target]);
  if (plain.code === 0) return;
  const lazy = await runDetached('umount', ['--lazy', target]);
  if (lazy.code !== 0) throw new Error(`umount ${target} failed: ${lazy.stderr || plain.stderr}`);
}

export interface BuildDisksOptions {
  /** Where images live: `<BUILD_DIR>/disks`. */
  imagesDir: string;
  /** Where they are mounted: `<BUILD_DIR>/workspaces`. */
  workspacesDir: string;
  /** The budget of one build (BUILD_DISK_MB); 0: no disk budget (the operator's explicit choice). */
  sizeBytes: number;
}

/**
 * Makes, mounts and sweeps build disks. Each image's file name carries its worker's pid and
 * start time, so a worker that starts (or any sweep) unmounts and deletes exactly the disks of
 * workers that are gone, never those of another live worker sharing BUILD_DIR.
 */
export class BuildDisks {
  private tag: Promise<string> | undefined;
  private readonly releasing = new Set<Promise<void>>();

  constructor(readonly options: BuildDisksOptions) {}

  get bounded(): boolean {
    return this.options.sizeBytes > 0;
  }

  /** A fresh disk mounted at `<workspacesDir>/<name>`, owned by `owner`; throws BuildDiskUnavailable saying why. */
  async mount(name: string, owner?: { uid: number; gid: number }): Promise<BuildDisk> {
    if (!/^[A-Za-z0-9_-]{1,100}$/.test(name)) throw new Error(`unexpected workspace name ${JSON.stringify(name)}`);
    if (process.getuid?.() !== 0) throw new BuildDiskUnavailable('the build worker does not run as root, and only root may mount a file system');
    const { imagesDir, workspacesDir, sizeBytes } = this.options;
    this.tag ??= processTag(process.pid).then((tag) => tag ?? `${process.pid}-0`);
    const image = join(imagesDir, `${name}.${await this.tag}.img`);
    const root = join(workspacesDir, name);
    const disk = new BuildDisk(root, image, sizeBytes);
    try {
      // Workspaces first: a recursive mkdir gives every directory it makes its mode, and BUILD_DIR
      // must stay traversable by the build user (the images' 0700 is for the images' own directory only).
      await mkdir(workspacesDir, { recursive: true, mode: 0o711 });
      await mkdir(imagesDir, { recursive: true, mode: 0o700 });
      // An earlier try of this same attempt (same worker) may have left its workspace and image: start clean.
      await unmount(root);
      await rm(root, { recursive: true, force: true });
      await unlink(image).catch(() => undefined);
      await mkdir(root, { mode: 0o700 });
      const file = await open(image, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
      // Sparse: only what the build writes takes space on the host.
      await file.truncate(sizeBytes).finally(() => file.close());
      const inodes = Math.min(Math.max(MIN_INODES, Math.floor(sizeBytes / 16_384)), Math.floor(sizeBytes / 4096));
      const extended = ['lazy_itable_init=1', 'nodiscard', ...(owner ? [`root_owner=${owner.uid}:${owner.gid}`] : [])].join(',');
      // No journal (a build disk never outlives a crash), no blocks reserved for root, inode tables written lazily.
      const mkfs = await runDetached('mkfs.ext4', [
        '-q',
        '-F',
        '-O',
        '^has_journal',
        '-m',
        '0',
        '-N',
        String(inodes),
        '-E',
        extended,
        '-L',
        'slipway-build',
        image,
      ]);
      if (mkfs.code !== 0) throw new BuildDiskUnavailable(`mkfs.ext4: ${mkfs.stderr || `exit ${mkfs.code}`}`);
      const mounted = await runDetached('mount', ['-t', 'ext4', '-o', 'loop,nosuid,nodev,noatime', image, root]);
      if (mounted.code !== 0) throw new BuildDiskUnavailable(`mount -o loop: ${mounted.stderr || `exit ${mounted.code}`}`);
      // No lost+found for the tenant to wonder about (nothing ever runs fsck on a build disk).
      await rmdir(join(root, 'lost+found')).catch(() => undefined);
      return disk;
    } catch (error) {
      await disk.release().catch(() => undefined);
      await unlink(image).catch(() => undefined);
      if (error instanceof BuildDiskUnavailable) throw error;
      throw new BuildDiskUnavailable((error as Error).message);
    }
  }

  /**
   * Releases a finished deployment's disk in the background: unmounting writes the file system's
   * dirty pages back to the image first (seconds after a big build, on a busy disk), which the
   * deployment need not wait for; nothing of the disk is reachable by then (its processes are
   * gone). Beyond MAX_RELEASING releases under way, waits for one. A release that fails is left
   * to the next sweep (`onError` says so).
   */
  async retire(disk: BuildDisk, onError: (error: Error) => void): Promise<void> {
    const release: Promise<void> = disk
      .release()
      .catch(onError)
      .finally(() => this.releasing.delete(release));
    this.releasing.add(release);
    while (this.releasing.size > MAX_RELEASING) await Promise.race(this.releasing);
  }

  /** Resolves once every release started so far has finished. */
  async drained(): Promise<void> {
    await Promise.all([...this.releasing]);
  }

  /**
   * Unmounts and deletes what workers that are gone left (their disks stay mounted after a
   * `kill -9`): mounts under the workspaces whose image is ours and whose owner is dead, then
   * images with no live owner. Returns what was removed.
   */
  async sweep(): Promise<{ unmounted: string[]; removed: string[] }> {
    const { imagesDir, workspacesDir } = this.options;
    const unmounted: string[] = [];
    const removed: string[] = [];
    for (const mount of await mounts()) {
      if (!mount.target.startsWith(`${workspacesDir}/`)) continue;
      const image = await backingFile(mount.source);
      if (!image?.startsWith(`${imagesDir}/`)) continue;
      const owner = /\.([0-9]+-[0-9]+)\.img$/.exec(image)?.[1];
      if (owner && (await ownerAlive(owner))) continue;
      await unmount(mount.target);
      await rmdir(mount.target).catch(() => undefined);
      unmounted.push(mount.target);
    }
    for (const name of await readdir(imagesDir).catch(() => [] as string[])) {
      const owner = /\.([0-9]+-[0-9]+)\.img$/.exec(name)?.[1];
      if (owner && (await ownerAlive(owner))) continue;
      const stillMounted = await Promise.all((await mounts()).map((m) => backingFile(m.source)));
      if (stillMounted.includes(join(imagesDir, name))) continue;
      await unlink(join(imagesDir, name)).catch(() => undefined);
      removed.push(name);
    }
    return { unmounted, removed };
  }
}
