import type { ChildProcess } from 'node:child_process';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import mime from 'mime-types';
import { renderNginxConfig, type Address, type NginxConfigInput, type Site, type TlsInput } from './nginx-config.js';
import { DEFAULT_NGINX_USER, assertWorkersReach, grantWorkers, nginxWorker } from './nginx-user.js';
import { alive, brotliModule, nginxFiles, reloadNginx, runningMaster, spawnNginx, stopNginx, validateConfig, waitExited } from './nginx-process.js';

export interface NginxPlaneOptions {
  bin: string;
  /** Config, pid file, temp files (`<RUNTIME_DIR>/nginx`). */
  stateDir: string;
  listen: Address;
  fallback: Address;
  scheme: 'http' | 'https';
  workers: number;
  /**
   * `edge`: this process starts nginx (as its child) and stops it on close; `supervisor`: the
   * runtime supervisor runs nginx (it outlives the edge), this edge adopts it from its pid file.
   */
  owner: 'edge' | 'supervisor';
  /** NGINX_USER: the unprivileged user the workers run as when the edge is root (nginx-user.ts); default `slipway-edge`. */
  workerUser?: string;
}

/** What a reload left behind: the old workers, which finish their requests and exit. */
export interface Reloaded {
  oldWorkers: number[];
}

interface Round {
  sites: Site[];
  resolve: (value: Reloaded) => void;
  reject: (error: Error) => void;
}

/** The fixed part of the config from the options; the sites vary. */
export async function baseInput(options: Omit<NginxPlaneOptions, 'owner' | 'bin'>): Promise<Omit<NginxConfigInput, 'sites'>> {
  // As root, the workers run as NGINX_USER, let into the state directory (slot markers, temp
  // paths); otherwise they run as the edge's own user (nginx cannot switch users).
  const worker = process.getuid?.() === 0 ? await nginxWorker(options.workerUser ?? DEFAULT_NGINX_USER) : null;
  if (worker) {
    await assertWorkersReach(options.stateDir, worker);
    await grantWorkers(options.stateDir, worker);
  }
  return {
    listen: options.listen,
    fallback: options.fallback,
    stateDir: options.stateDir,
    scheme: options.scheme,
    workers: options.workers,
    brotliModule: await brotliModule(),
    user: worker && { name: worker.name, group: worker.group },
    contentTypes: { byExtension: mime.types, withCharset: [...new Set(Object.values(mime.types))].filter((type) => mime.charset(type)) },
  };
}

/**
 * Writes the config the edge renders, atomically and never unchecked: the candidate is written
 * beside the live file, validated with `nginx -t`, renamed over it, then nginx reloads (SIGHUP).
 * A candidate nginx refuses is logged and left aside: the live file stays the last good one and
 * the caller's swap fails (the old release keeps serving). Reloads are serialized and coalesced:
 * while one runs, every later request joins the next round, which renders the latest sites.
 */
export class NginxPlane {
  private readonly logger = new Logger('edge');
  private base!: Omit<NginxConfigInput, 'sites'>;
  private tls?: TlsInput;
  private statusFeed?: NginxConfigInput['statusFeed'];
  private metricsLog?: string;
  private master?: number;
  private child?: ChildProcess;
  private pending?: Round[];
  private running = false;
  private closed = false;
  /** The text of the live file as this process last installed it (an adopted nginx: reloaded once). */
  private installed?: string;

  constructor(private readonly options: NginxPlaneOptions) {}

  get files(): ReturnType<typeof nginxFiles> {
    return nginxFiles(this.options.stateDir);
  }

  /** Starts (owner `edge`) or adopts nginx, then applies `sites`. */
  async start(sites: Site[], fallback: Address = this.options.fallback): Promise<void> {
    await mkdir(this.options.stateDir, { recursive: true, mode: 0o700 });
    this.base = await baseInput({ ...this.options, fallback });
    if (this.options.owner === 'edge') {
      const adopted = await runningMaster(this.options.stateDir);
      // A master left by an edge that died without closing (same state directory): stop it, start ours.
      if (adopted) await stopNginx(adopted, 2_000);
      await this.install(sites);
      const started = await spawnNginx(this.options.bin, this.options.stateDir, this.logger);
      this.child = started.child;
      this.master = started.master;
      this.child.on('exit', (code, signal) => {
        if (!this.closed) this.logger.error(`nginx exited (${signal ?? code}); the edge serves nothing until it restarts`);
      });
    } else {
      const deadline = Date.now() + 30_000;
      while (!(this.master = await runningMaster(this.options.stateDir))) {
        if (Date.now() > deadline) throw new Error(`no nginx master running for ${this.options.stateDir} (the runtime supervisor starts it)`);
        await new Promise((r) => setTimeout(r, 100));
      }
      // A restarted edge renders the same table: no reload then (clients keep their connections).
      this.installed = await readFile(this.files.conf, 'utf8').catch(() => undefined);
      await this.apply(sites);
    }
    this.logger.log(
      `nginx data plane: master ${this.master} on ${this.options.listen.host}:${this.options.listen.port}, fallback to this edge on ${fallback.host}:${fallback.port}`,
    );
  }

  /** Where nginx sends its 5xx answers, from the next render on (the first-minute watch). */
  setStatusFeed(feed: NginxConfigInput['statusFeed']): void {
    this.statusFeed = feed;
  }

  /** The per-application metrics log, from the next render on. */
  setMetricsLog(file: string | undefined): void {
    this.metricsLog = file;
  }

  /** HTTPS servers from the next render on (the edge's certificates; see nginx-tls-sites.ts). */
  setTls(tls: TlsInput | undefined): void {
    this.tls = tls;
  }

  /** Renders `sites`, validates, swaps the file and reloads; resolves once new workers serve. */
  apply(sites: Site[]): Promise<Reloaded> {
    return new Promise<Reloaded>((resolve, reject) => {
      (this.pending ??= []).push({ sites, resolve, reject });
      void this.pump();
    });
  }

  /** Waits for the old workers of a reload to finish their requests, at most `graceMs`. */
  async drained(reloaded: Reloaded, graceMs: number): Promise<boolean> {
    return waitExited(reloaded.oldWorkers, graceMs);
  }

  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.pending?.length) {
        const round = this.pending;
        this.pending = undefined;
        // The latest request wins: it was made with the newest route table.
        const sites = round.at(-1)!.sites;
        try {
          const reloaded = await this.reload(sites);
          for (const r of round) r.resolve(reloaded);
        } catch (error) {
          for (const r of round) r.reject(error as Error);
        }
      }
    } finally {
      this.running = false;
    }
  }

  private async reload(sites: Site[]): Promise<Reloaded> {
    if (this.closed) throw new Error('the nginx plane is closed');
    // Same text as the running config (a swap between slots, a message that changed nothing): no
    // reload, so no client connection is touched.
    if (!(await this.install(sites))) return { oldWorkers: [] };
    const master = await this.liveMaster();
    try {
      return { oldWorkers: await reloadNginx(master, 10_000) };
    } catch (error) {
      // The master died under the reload: the runtime supervisor's new one started on the file
      // just installed, or is about to; a SIGHUP to it makes sure.
      if (this.options.owner !== 'supervisor' || alive(master)) throw error;
      return { oldWorkers: await reloadNginx(await this.liveMaster(), 10_000) };
    }
  }

  /**
   * The master to reload. Owner `supervisor`: whichever the pid file names now (the runtime
   * supervisor replaces a master that dies, on the same sockets), waiting for it a little while
   * it does.
   */
  private async liveMaster(): Promise<number> {
    if (this.options.owner === 'edge') {
      if (!this.master || !alive(this.master)) throw new Error('nginx is not running');
      return this.master;
    }
    const deadline = Date.now() + 10_000;
    for (;;) {
      const master = await runningMaster(this.options.stateDir);
      if (master) return (this.master = master);
      if (Date.now() > deadline) throw new Error(`no nginx master running for ${this.options.stateDir} (the runtime supervisor restarts it)`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /**
   * Candidate → `nginx -t` → rename over the live file; false when the text is the running one.
   * Throws (live file untouched) when nginx refuses it.
   */
  private async install(sites: Site[]): Promise<boolean> {
    const text = renderNginxConfig({ ...this.base, tls: this.tls, statusFeed: this.statusFeed, metricsLog: this.metricsLog, sites });
    if (text === this.installed) return false;
    const { conf, candidate } = this.files;
    await writeFile(candidate, text, { mode: 0o600 });
    const refused = await validateConfig(this.options.bin, candidate);
    if (refused) {
      this.logger.error(`nginx refused the new config; the last good one keeps serving: ${refused}`);
      await rename(candidate, join(this.options.stateDir, 'nginx.conf.refused')).catch(() => undefined);
      throw new Error(`nginx refused the new config: ${refused}`);
    }
    await rename(candidate, conf);
    this.installed = text;
    return true;
  }

  /** Owner `edge`: nginx stops (requests in flight finish). Owner `supervisor`: nginx keeps serving. */
  async close(graceMs: number): Promise<void> {
    this.closed = true;
    if (this.options.owner === 'edge' && this.master) await stopNginx(this.master, graceMs);
  }
}
