import type { ChildProcess } from 'node:child_process';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { Logger } from '@nestjs/common';
import type { EdgeConfig } from '../config.js';
import { planeDirs } from './edge-plane.js';
import { renderNginxConfig } from './nginx-config.js';
import { baseInput } from './nginx-plane.js';
import { nginxFiles, nginxMissing, runningMaster, spawnNginx, stopNginx, validateConfig } from './nginx-process.js';

/**
 * nginx run by the runtime supervisor (`EDGE_NGINX_OWNER=supervisor`, what `pnpm start` does):
 * the process that outlives the edge keeps nginx too, so traffic to running apps goes on while
 * the edge restarts. It starts nginx on a config with no sites (everything to the edge's
 * internal port; the edge renders the real table as soon as it is up), restarts it with backoff
 * on the last config the edge installed if it dies, and stops it (gracefully) on close.
 */
export class NginxKeeper {
  private readonly logger = new Logger('runtime');
  private child?: ChildProcess;
  private master?: number;
  private closed = false;
  private backoffMs = 500;
  private readonly stateDir: string;

  constructor(private readonly config: EdgeConfig, runtimeDir: string) {
    this.stateDir = planeDirs(runtimeDir).state;
  }

  async start(): Promise<void> {
    const missing = nginxMissing(this.config.NGINX_BIN);
    if (missing) throw new Error(missing);
    if (!this.config.EDGE_INTERNAL_PORT) throw new Error('EDGE_NGINX_OWNER=supervisor needs a fixed EDGE_INTERNAL_PORT (the edge behind nginx)');
    await mkdir(this.stateDir, { recursive: true, mode: 0o700 });
    const stale = await runningMaster(this.stateDir);
    if (stale) await stopNginx(stale, 2_000);
    const base = await baseInput({ stateDir: this.stateDir, listen: { host: this.config.HOST, port: this.config.PORT }, fallback: { host: '127.0.0.1', port: this.config.EDGE_INTERNAL_PORT }, scheme: this.config.APPS_SCHEME, workers: this.config.NGINX_WORKERS, workerUser: this.config.NGINX_USER });
    const { conf, candidate } = nginxFiles(this.stateDir);
    await writeFile(candidate, renderNginxConfig({ ...base, sites: [] }), { mode: 0o600 });
    const refused = await validateConfig(this.config.NGINX_BIN, candidate);
    if (refused) throw new Error(`nginx refused its start-up config: ${refused}`);
    await rename(candidate, conf);
    await this.spawn();
    this.logger.log(`nginx data plane: master ${this.master} on ${this.config.HOST}:${this.config.PORT} (kept by the runtime supervisor)`);
  }

  private async spawn(): Promise<void> {
    const started = await spawnNginx(this.config.NGINX_BIN, this.stateDir, this.logger);
    this.child = started.child;
    this.master = started.master;
    const since = Date.now();
    this.child.once('exit', (code, signal) => {
      if (this.closed) return;
      if (Date.now() - since > 60_000) this.backoffMs = 500;
      this.logger.error(`nginx exited (${signal ?? code}); restarting it in ${this.backoffMs} ms on the last config the edge installed`);
      setTimeout(() => void this.spawn().catch((error: Error) => this.logger.error(`nginx restart failed: ${error.message}`)), this.backoffMs);
      this.backoffMs = Math.min(this.backoffMs * 2, 30_000);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.master) await stopNginx(this.master, this.config.DRAIN_GRACE_MS);
  }
}
