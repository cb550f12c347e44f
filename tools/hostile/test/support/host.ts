/** The machine as the operator (the test, root) sees it: processes by what their environment holds, addresses. */
import { cp, mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const HOSTILE_FIXTURES = fileURLToPath(new URL('../../fixtures', import.meta.url));

export interface HostProcess {
  pid: number;
  uid: number;
  gid: number;
  cmdline: string;
}

/** Every process on the machine whose environment contains `needle` (how the test finds an app's processes). */
export async function processesHolding(needle: string): Promise<HostProcess[]> {
  const found: HostProcess[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const environ = await readFile(`/proc/${name}/environ`, 'latin1');
      if (!environ.includes(needle)) continue;
      const status = await readFile(`/proc/${name}/status`, 'utf8');
      const cmdline = (await readFile(`/proc/${name}/cmdline`, 'utf8')).replace(/\0/g, ' ').trim();
      found.push({
        pid: Number(name),
        uid: Number(/^Uid:\s*(\d+)/m.exec(status)?.[1]),
        gid: Number(/^Gid:\s*(\d+)/m.exec(status)?.[1]),
        cmdline: cmdline.slice(0, 200),
      });
    } catch {
      /* gone, or a kernel thread */
    }
  }
  return found;
}

/** The machine's own non-loopback IPv4 addresses: an app must not reach the platform through them either. */
export function hostAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .filter((a): a is NonNullable<typeof a> => Boolean(a && a.family === 'IPv4' && !a.internal))
    .map((a) => a.address);
}

/** uid of a system user, or null when there is none. */
export async function uidOf(user: string): Promise<number | null> {
  const passwd = await readFile('/etc/passwd', 'utf8');
  const line = passwd.split('\n').find((l) => l.startsWith(`${user}:`));
  return line ? Number(line.split(':')[2]) : null;
}

/** A copy of a fixture in a temp folder (the CLI deploys folders), with files added or replaced. */
export async function fixtureCopy(name: string, files: Record<string, string> = {}, replace: Record<string, [from: string, to: string]> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `slipway-hostile-src-${name}-`));
  await cp(join(HOSTILE_FIXTURES, name), dir, { recursive: true });
  for (const [path, content] of Object.entries(files)) await writeFile(join(dir, path), content);
  for (const [path, [from, to]] of Object.entries(replace)) await writeFile(join(dir, path), (await readFile(join(dir, path), 'utf8')).replaceAll(from, to));
  return dir;
}
