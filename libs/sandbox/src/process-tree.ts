import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

async function parentOf(pid: number): Promise<number | null> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (!stat) return null;
  // The command name may hold spaces and parentheses: fields start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[1]);
}

/** Every process below `root` (not `root` itself), read from /proc. */
export async function descendants(root: number): Promise<number[]> {
  const children = new Map<number, number[]>();
  for (const name of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    const parent = await parentOf(pid);
    if (parent === null) continue;
    children.set(parent, [...(children.get(parent) ?? []), pid]);
  }
  const found: number[] = [];
  const stack = [root];
  while (stack.length > 0 && found.length < 100_000) {
    for (const child of children.get(stack.pop()!) ?? []) {
      found.push(child);
      stack.push(child);
    }
  }
  return found;
}

/** The process's pid in each pid namespace, outermost first (`NSpid:`). */
export async function namespacePids(pid: number): Promise<number[]> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const line = status.split('\n').find((l) => l.startsWith('NSpid:'));
  return line ? line.slice(6).trim().split(/\s+/).map(Number) : [];
}

export function signal(pids: number[], name: NodeJS.Signals): void {
  for (const pid of pids) {
    // 0 and negative pids mean process groups (this one included), 1 is init: never those.
    if (!Number.isInteger(pid) || pid <= 1) continue;
    try {
      process.kill(pid, name);
    } catch {
      /* already gone */
    }
  }
}

/**
 * When the process started (`/proc/<pid>/stat` field 22, clock ticks since boot): with the pid it
 * names one process for good, since a pid is reused but never with the same start time. Null when
 * no such process runs (gone, or a zombie: it has exited and only waits to be reaped).
 */
export function processStartTime(pid: number): number | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // Fields start after the command name's closing ')': field 3 (state) is the first, 22 the 20th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (fields[0] === 'Z' || fields[0] === 'X') return null;
  const started = Number(fields[19]);
  return Number.isFinite(started) ? started : null;
}

/** Whether `pid` is still the very process that started at `startTime` (and has not exited). */
export function isSameProcess(pid: number, startTime: number): boolean {
  return pid > 1 && processStartTime(pid) === startTime;
}
