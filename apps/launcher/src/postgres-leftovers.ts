import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** What `postmaster.pid` says of the instance that wrote it (Postgres's own lock file). */
export interface PostmasterLock {
  pid: number;
  /** The System V segment every process of that instance stays attached to (Postgres's interlock). */
  shmKey: number;
  shmId: number;
}

/** Processes of an old instance, found and killed. */
export interface Cleared {
  /** A postmaster still running for this data directory (an earlier launcher's, killed without stopping it). */
  postmaster?: number;
  /** Processes still attached to the old instance's segment once its postmaster was gone (backends that outlived it). */
  attached: number[];
  /** Still attached after the wait (a process stuck in the kernel); the next start is refused until they go. */
  stuck: number[];
}

/** Line 1: the postmaster's pid; line 7: `<shm key> <shm id>` (written once shared memory exists). */
export async function readPostmasterLock(dataDir: string): Promise<PostmasterLock | undefined> {
  const lines = (await readFile(join(dataDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n');
  const pid = Number(lines[0]);
  const [key, id] = (lines[6] ?? '').trim().split(/\s+/).map(Number);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  return { pid, shmKey: Number.isInteger(key) ? key! : 0, shmId: Number.isInteger(id) ? id! : -1 };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    /* already gone */
  }
}

/** A postgres process whose command line names this data directory (the postmaster: `postgres -D <dir> …`). */
async function isPostmasterOf(pid: number, dataDir: string): Promise<boolean> {
  const comm = (await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '')).trim();
  const args = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
  const dir = args.indexOf('-D');
  return comm === 'postgres' && dir >= 0 && args[dir + 1] === dataDir;
}

/**
 * Attachments of the segment as the kernel counts them (`/proc/sysvipc/shm`): 0 when nobody is
 * left, undefined when the segment is gone (or the table cannot be read).
 */
async function attachCount(lock: PostmasterLock): Promise<number | undefined> {
  const table = await readFile('/proc/sysvipc/shm', 'utf8').catch(() => '');
  for (const line of table.split('\n').slice(1)) {
    const [key, id, , , , , nattch] = line.trim().split(/\s+/).map(Number);
    if (id === lock.shmId && key === lock.shmKey) return nattch;
  }
  return undefined;
}

/**
 * Every process mapping the instance's System V segment (`/SYSV<key> (deleted)` with inode = shm
 * id in /proc/<pid>/maps): exactly the processes of that instance, whatever their parent now
 * (backends put themselves in sessions of their own, and are re-parented when the postmaster dies).
 */
export async function processesAttached(lock: PostmasterLock): Promise<number[]> {
  const name = `/SYSV${lock.shmKey.toString(16).padStart(8, '0')}`;
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const maps = await readFile(`/proc/${entry}/maps`, 'utf8').catch(() => '');
    if (!maps.includes(name)) continue;
    const attached = maps.split('\n').some((line) => {
      const fields = line.trim().split(/\s+/);
      return fields[5] === name && Number(fields[4]) === lock.shmId;
    });
    if (attached) found.push(Number(entry));
  }
  return found;
}

/**
 * Makes sure nothing of the instance that last ran in `dataDir` is left before a new postmaster
 * starts there. A postmaster still running (an earlier launcher's) gets Postgres's fast shutdown
 * (SIGINT), then SIGKILL after `graceMs`. Processes still attached to its shared memory once it is
 * gone — backends of a killed postmaster that have not noticed yet, e.g. in the middle of a long
 * query — are killed: while any is attached, a new postmaster refuses to start ("pre-existing
 * shared memory block is still in use"). Crash recovery from the WAL is then Postgres's own job.
 */
export async function clearOldInstance(dataDir: string, graceMs = 10_000): Promise<Cleared> {
  const lock = await readPostmasterLock(dataDir);
  const cleared: Cleared = { attached: [], stuck: [] };
  if (!lock) return cleared;
  if (await isPostmasterOf(lock.pid, dataDir)) {
    cleared.postmaster = lock.pid;
    signal(lock.pid, 'SIGINT');
    const deadline = Date.now() + graceMs;
    while (Date.now() < deadline && (await isPostmasterOf(lock.pid, dataDir))) await sleep(50);
    if (await isPostmasterOf(lock.pid, dataDir)) signal(lock.pid, 'SIGKILL');
  }
  if (lock.shmId < 0) return cleared;
  // The kernel's count first (cheap); the scan of every process only when someone is attached.
  const remaining = async () => ((await attachCount(lock)) === 0 ? [] : processesAttached(lock));
  cleared.attached = await remaining();
  for (const pid of cleared.attached) signal(pid, 'SIGKILL');
  // SIGKILL takes effect when the process next leaves the kernel: wait for that, boundedly.
  const deadline = Date.now() + 5000;
  let left = cleared.attached;
  while (left.length && Date.now() < deadline) {
    await sleep(25);
    left = await remaining();
  }
  cleared.stuck = left;
  return cleared;
}
