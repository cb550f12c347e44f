/**
 * The platform exactly as `pnpm start` runs it (libs/testing's LaunchedPlatform: the built launcher
 * with its own embedded Postgres, its own redis-server and every service under its supervision,
 * on free ports and a private SLIPWAY_HOME). Plus what the supervision suite measures with: a
 * bounded request loop against a deployed app, and the app's processes as /proc shows them.
 */
import { request } from 'node:http';
import { readdir, readFile } from 'node:fs/promises';
import { LaunchedPlatform as Launched, waitFor } from '@slipway/testing';

/**
 * Milliseconds since the epoch with sub-millisecond precision: when a request was sent and when a
 * process was killed, compared. `Date.now()` would put a request sent earlier in the kill's own
 * millisecond (already in flight, cut by the kill) among those sent after it.
 */
export const clock = (): number => performance.timeOrigin + performance.now();

export type LaunchedPlatform = Launched;
export const LaunchedPlatform = {
  /** `env`: further settings for the launcher (and so every service), e.g. fast stall detection. */
  start(label: string, env: Record<string, string> = {}): Promise<Launched> {
    return Launched.start(label, { suite: 'faults', env: { NO_COLOR: '1', BCRYPT_ROUNDS: '4', ...env } });
  },
};

/** One app request's outcome: when it was sent, and its status (0: no answer). */
export interface Sample {
  at: number;
  status: number;
}

/**
 * Requests `path` of the app at `host` through the edge, one after another (a new connection each,
 * as independent clients do), until stopped or `maxMs` passed: bounded in time and in count.
 */
export class RequestLoop {
  readonly samples: Sample[] = [];
  private stopped = false;
  private readonly done: Promise<void>;

  constructor(
    private readonly port: number,
    private readonly host: string,
    private readonly path: string,
    maxMs = 10 * 60_000,
    maxRequests = 200_000,
  ) {
    this.done = (async () => {
      const end = Date.now() + maxMs;
      while (!this.stopped && Date.now() < end && this.samples.length < maxRequests) {
        const at = clock();
        this.samples.push({ at, status: await this.one() });
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
  }

  private one(): Promise<number> {
    return new Promise((resolve) => {
      const req = request({ host: '127.0.0.1', port: this.port, path: this.path, headers: { host: this.host }, agent: false, timeout: 5000 }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', () => resolve(0));
      });
      req.on('error', () => resolve(0));
      req.on('timeout', () => req.destroy());
      req.end();
    });
  }

  /** Samples sent at or after `from` (and before `to`). */
  between(from: number, to = Infinity): Sample[] {
    return this.samples.filter((s) => s.at >= from && s.at < to);
  }

  /** Waits until a request sent after `from` succeeded (200). */
  async answeredAfter(from: number, timeoutMs = 60_000): Promise<Sample> {
    return waitFor(() => this.samples.find((s) => s.at >= from && s.status === 200), {
      timeoutMs,
      intervalMs: 20,
      what: `an app request sent after ${new Date(from).toISOString()} to succeed`,
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }
}

/** Processes whose command line names `needle` (an app's sandbox names its release directory), with their parent. */
export async function processesNaming(needle: string): Promise<{ pid: number; ppid: number }[]> {
  const found: { pid: number; ppid: number }[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const cmdline = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    if (!cmdline.includes(needle)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (stat) found.push({ pid: Number(name), ppid });
  }
  return found;
}

/** A process as /proc shows it. */
export interface LiveProcess {
  pid: number;
  ppid: number;
  pgrp: number;
  title: string;
}

/** Live (non-zombie) processes whose command line starts with `prefix` (nginx's titles: `nginx: master process …`). */
export async function liveProcesses(prefix: string): Promise<LiveProcess[]> {
  const out: LiveProcess[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const title = (await readFile(`/proc/${name}/cmdline`, 'latin1').catch(() => '')).replace(/\0+$/, '').replace(/\0/g, ' ');
    if (!title.startsWith(prefix)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'latin1').catch(() => '');
    const [state, ppid, pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (stat && state !== 'Z') out.push({ pid: Number(name), ppid: Number(ppid), pgrp: Number(pgrp), title });
  }
  return out;
}
