import type { ChildProcess } from 'node:child_process';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { Logger } from '@nestjs/common';
import type { DataPlaneConfig } from '../config.js';
import { planeDirs } from './edge-plane.js';
import { renderNginxConfig } from './nginx-config.js';
import { baseInput } from './nginx-plane.js';
import {
  alive,
  isMasterOf,
  nginxFiles,
  nginxMissing,
  nginxProcesses,
  processGroupOf,
  retireNginx,
  runningMaster,
  spawnNginx,
  stopNginx,
  validateConfig,
} from './nginx-process.js';
import { holdWhenFree, listeningOn, openListenSockets, socketInodesOf, type ListenAddress, type ListenSocket } from './nginx-sockets.js';

/** What the keeper reads of the runtime supervisor's configuration (the edge's environment). */
export type NginxKeeperConfig = Pick<
  DataPlaneConfig,
  'NGINX_BIN' | 'HOST' | 'PORT' | 'EDGE_INTERNAL_PORT' | 'APPS_SCHEME' | 'NGINX_WORKERS' | 'DRAIN_GRACE_MS' | 'EDGE_HTTPS' | 'EDGE_HTTPS_PORT' | 'NGINX_USER'
>;

/** How often a master that is not this process's child is looked at (it sends no 'exit' event here). */
export const MASTER_POLL_MS = 200;
/** A master that dies again within this window of a restart is restarted after a growing delay. */
const RESTART_WINDOW_MS = 60_000;
const FIRST_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 30_000;

interface Master {
  pid: number;
  /** The group its workers share (it leads it when started detached): what is left of it once it is gone. */
  pgrp: number;
  /** Set when this process started it; an adopted master is watched through /proc. */
  child?: ChildProcess;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * nginx run by the runtime supervisor (`EDGE_NGINX_OWNER=supervisor`, what `pnpm start` does):
 * the process that outlives the edge keeps nginx too, so traffic to running apps goes on while
 * the edge restarts. The listening sockets are the keeper's (the launcher's when it passed them,
 * see nginx-sockets.ts), handed to each nginx master it starts; nginx runs in a process group of
 * its own, so it also outlives the runtime supervisor, whose next instance adopts it.
 *
 * - A master that dies is replaced at once (a growing delay only when it keeps dying) by a new one
 *   on the same sockets and the last config the edge installed; the old master's orphaned workers,
 *   which still serve the old config on those sockets meanwhile, then get SIGQUIT (they finish what
 *   they serve and exit) and SIGKILL after DRAIN_GRACE_MS. No connection is refused meanwhile.
 * - A worker that dies is nginx's own business: its master starts another.
 * - At start, a master of this state directory that serves the keeper's sockets (one an earlier
 *   runtime supervisor left running) is adopted, not replaced: traffic never stops. Anything else
 *   of an earlier instance (a master on other sockets, orphaned workers on the port) is retired,
 *   so a start never fails on `Address already in use` because of our own leftovers.
 * - close() stops nginx gracefully (Ctrl-C, the launcher gone).
 */
export class NginxKeeper {
  private readonly logger = new Logger('runtime');
  private readonly stateDir: string;
  private sockets: ListenSocket[] = [];
  /**
   * Addresses whose socket only an adopted master holds (no launcher socket, and this process
   * could not hold its own while it listened): replacing that master means waiting for the old
   * workers to close the port first, a short window of refused connections.
   */
  private missing: ListenAddress[] = [];
  private master?: Master;
  private closed = false;
  private poll?: NodeJS.Timeout;
  private healing?: Promise<void>;
  private readonly restarts: number[] = [];
  private readonly retiring = new Set<Promise<unknown>>();

  constructor(
    private readonly config: NginxKeeperConfig,
    runtimeDir: string,
    /** Where `SLIPWAY_LISTEN_FDS` is read (the launcher's sockets). */
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.stateDir = planeDirs(runtimeDir).state;
  }

  /** The master serving now. */
  get masterPid(): number | undefined {
    return this.master?.pid;
  }

  /** Resolves once a master that died has been replaced (and its leftovers retired). */
  async settled(): Promise<void> {
    while (this.healing) await this.healing;
    await Promise.allSettled([...this.retiring]);
  }

  async start(): Promise<void> {
    const missing = nginxMissing(this.config.NGINX_BIN);
    if (missing) throw new Error(missing);
    if (!this.config.EDGE_INTERNAL_PORT) throw new Error('EDGE_NGINX_OWNER=supervisor needs a fixed EDGE_INTERNAL_PORT (the edge behind nginx)');
    await mkdir(this.stateDir, { recursive: true, mode: 0o700 });
    const opened = await openListenSockets(this.listenAddresses(), this.env);
    this.sockets = opened.sockets;
    this.missing = opened.busy;

    const running = await runningMaster(this.stateDir);
    if (running && (await this.servesOurPorts(running))) {
      this.watch({ pid: running, pgrp: processGroupOf(running) ?? running });
      const note = this.missing.length ? `; it holds ${this.describe(this.missing)} itself, so replacing it would refuse connections for a moment` : '';
      this.logger.log(
        `nginx data plane: adopted the running master ${running} on ${this.describe(this.listenAddresses())} (kept by the runtime supervisor${note})`,
      );
      return;
    }
    if (running) {
      this.logger.warn(`nginx master ${running} of ${this.stateDir} does not serve this supervisor's sockets: stopping it`);
      await stopNginx(running, 2_000);
    }
    const leftovers = await this.leftovers();
    if (leftovers.length) this.logger.warn(`nginx processes of an earlier instance still hold the port (pids ${leftovers.join(', ')}): retiring them`);
    if (this.missing.length) await this.acquireMissing(leftovers);
    else void this.retire(leftovers);
    await this.installStartConfig();
    await this.launch();
    this.logger.log(
      `nginx data plane: master ${this.master!.pid} on ${this.describe(this.sockets)} (kept by the runtime supervisor; sockets: ${this.sockets.map((s) => `${s.role} ${s.origin}`).join(', ')})`,
    );
  }

  /** Stops nginx gracefully (requests in flight finish, at most DRAIN_GRACE_MS). */
  async close(): Promise<void> {
    this.stopWatching();
    await this.healing?.catch(() => undefined);
    const master = this.master;
    this.master = undefined;
    if (master) {
      await stopNginx(master.pid, this.config.DRAIN_GRACE_MS);
      await this.retire(await this.groupMembers(master.pgrp));
    }
    await Promise.allSettled([...this.retiring]);
    this.closeHeldSockets();
  }

  /**
   * Stops watching and leaves nginx running, as a runtime supervisor that dies does (its own
   * sockets close with it): the next keeper adopts the master. For handing over within one process.
   */
  detach(): void {
    this.stopWatching();
    this.master = undefined;
    this.closeHeldSockets();
  }

  private stopWatching(): void {
    this.closed = true;
    if (this.poll) clearInterval(this.poll);
    this.poll = undefined;
  }

  private closeHeldSockets(): void {
    for (const socket of this.sockets) {
      socket.held?.close();
      socket.held = undefined;
    }
  }

  private listenAddresses(): ListenAddress[] {
    const out: ListenAddress[] = [{ role: 'edge', host: this.config.HOST, port: this.config.PORT }];
    // The HTTPS socket is in the start-up config too: nginx keeps an inherited socket only while a `listen` names it.
    if (this.config.EDGE_HTTPS === 'acme') out.push({ role: 'edge-https', host: this.config.HOST, port: this.config.EDGE_HTTPS_PORT });
    return out;
  }

  private describe(addresses: ListenAddress[]): string {
    return addresses.map((a) => `${a.host}:${a.port}`).join(' and ');
  }

  /** The master listens on every socket the keeper has, and on the ports whose socket it could not get. */
  private async servesOurPorts(master: number): Promise<boolean> {
    const holds = await socketInodesOf(master);
    if (!this.sockets.every((s) => holds.has(s.inode))) return false;
    for (const address of this.missing) if (!(await listeningOn(address.port)).some((inode) => holds.has(inode))) return false;
    return true;
  }

  /**
   * nginx processes left by an earlier instance: those holding the keeper's sockets (or listening
   * on the ports it could not get), and every nginx process of their groups (workers already
   * shutting down hold the port no more; a master of this state directory the pid file no longer
   * names goes too). A live master of another state directory is someone else's nginx: that is an
   * error, not ours to stop.
   */
  private async leftovers(): Promise<number[]> {
    const inodes = new Set(this.sockets.map((s) => s.inode));
    for (const address of this.missing) for (const inode of await listeningOn(address.port)) inodes.add(inode);
    const all = await nginxProcesses();
    const groups = new Set<number>();
    for (const p of all) {
      const holds = await socketInodesOf(p.pid);
      if (![...inodes].some((inode) => holds.has(inode))) continue;
      if (p.title.startsWith('nginx: master process') && !(await isMasterOf(p.pid, this.stateDir)))
        throw new Error(
          `another nginx (master ${p.pid}: ${p.title}) listens on ${this.describe(this.listenAddresses())}: stop it, or give Slipway another PORT`,
        );
      groups.add(p.pgrp);
    }
    return all.filter((p) => groups.has(p.pgrp)).map((p) => p.pid);
  }

  /** The nginx processes of a group (an old master's workers, wherever they were reparented). */
  private async groupMembers(pgrp: number): Promise<number[]> {
    return (await nginxProcesses()).filter((p) => p.pgrp === pgrp).map((p) => p.pid);
  }

  /** SIGQUIT, then SIGKILL after DRAIN_GRACE_MS; close() waits for it. */
  private retire(pids: number[]): Promise<void> {
    if (!pids.length) return Promise.resolve();
    const started = Date.now();
    const done = retireNginx(pids, this.config.DRAIN_GRACE_MS).then((killed) => {
      const how = killed.length ? `; ${killed.join(', ')} killed after ${this.config.DRAIN_GRACE_MS} ms` : '';
      this.logger.log(`old nginx processes ${pids.join(', ')} retired in ${Date.now() - started} ms (SIGQUIT${how})`);
    });
    this.retiring.add(done);
    void done.finally(() => this.retiring.delete(done));
    return done;
  }

  /**
   * Holds the sockets only an old instance held, then retires it (`pids`): a helper already
   * retrying the bind when the old workers get SIGQUIT (they close their listening sockets at
   * once) takes the port within milliseconds. Still in use after they are gone is an error.
   */
  private async acquireMissing(pids: number[]): Promise<{ retired: Promise<void> }> {
    let retiring: Promise<void> | undefined;
    const retireOnce = () => (retiring ??= this.retire(pids));
    const taken = await Promise.allSettled(this.missing.map((address) => holdWhenFree(address, this.config.DRAIN_GRACE_MS + 3_000, retireOnce)));
    // The port may have been free already: what is left of the old instance goes all the same.
    const retired = retireOnce();
    for (const result of taken) if (result.status === 'fulfilled') this.sockets.push(result.value);
    const failed = taken.flatMap((result, i) => (result.status === 'rejected' ? [this.missing[i]!] : []));
    this.missing = failed;
    if (failed.length) throw new Error(`${this.describe(failed)} is in use by another process: nginx cannot listen there`);
    return { retired };
  }

  /**
   * The start-up config: no sites (everything to the edge's internal port; the edge renders the
   * real table as soon as it is up), the HTTPS listener when TLS is on. The live file is kept
   * instead when it has the same frame (listen addresses, the edge's port): the edge installed it
   * during this run, and a restarted edge would not install the same table again.
   */
  private async installStartConfig(): Promise<void> {
    const base = await baseInput({
      stateDir: this.stateDir,
      listen: { host: this.config.HOST, port: this.config.PORT },
      fallback: { host: '127.0.0.1', port: this.config.EDGE_INTERNAL_PORT },
      scheme: this.config.APPS_SCHEME,
      workers: this.config.NGINX_WORKERS,
      workerUser: this.config.NGINX_USER,
    });
    const tls = this.config.EDGE_HTTPS === 'acme' ? { httpsPort: this.config.EDGE_HTTPS_PORT, redirectHttp: true, certificates: [] } : undefined;
    const text = renderNginxConfig({ ...base, tls, sites: [] });
    const { conf, candidate } = nginxFiles(this.stateDir);
    const live = await readFile(conf, 'utf8').catch(() => undefined);
    if (live !== undefined && frame(live) === frame(text) && !(await validateConfig(this.config.NGINX_BIN, conf))) return;
    await writeFile(candidate, text, { mode: 0o600 });
    const refused = await validateConfig(this.config.NGINX_BIN, candidate);
    if (refused) throw new Error(`nginx refused its start-up config: ${refused}`);
    await rename(candidate, conf);
  }

  /** A new master on the keeper's sockets and the live config file. */
  private async launch(): Promise<void> {
    const started = await spawnNginx(this.config.NGINX_BIN, this.stateDir, this.logger, { listenFds: this.sockets.map((s) => s.fd), detached: true });
    // nginx binds a socket of its own when no inherited one has the `listen` address exactly:
    // that fails while the keeper holds the port, but say so plainly if it ever did not.
    const holds = await socketInodesOf(started.master);
    const foreign = this.sockets.filter((s) => !holds.has(s.inode));
    if (foreign.length)
      this.logger.error(`nginx master ${started.master} did not take over the socket for ${this.describe(foreign)}: its config's listen address differs`);
    this.watch({ pid: started.master, pgrp: started.master, child: started.child });
  }

  private watch(master: Master): void {
    this.master = master;
    if (master.child) {
      master.child.once('exit', (code, signal) => this.gone(master, signal ?? `code ${code}`));
      return;
    }
    this.poll ??= setInterval(() => {
      const current = this.master;
      if (current && !current.child && !alive(current.pid)) this.gone(current, 'no longer running');
    }, MASTER_POLL_MS);
    this.poll.unref();
  }

  private gone(master: Master, how: string): void {
    if (this.closed || this.master !== master) return;
    this.master = undefined;
    const healing = this.heal(master, how).finally(() => {
      if (this.healing === healing) this.healing = undefined;
    });
    this.healing = healing;
  }

  /** A new master first (the sockets stay open, connections wait in the backlog), then the old workers retire. */
  private async heal(dead: Master, how: string): Promise<void> {
    const now = Date.now();
    while (this.restarts.length && this.restarts[0]! < now - RESTART_WINDOW_MS) this.restarts.shift();
    let delay = this.restarts.length ? Math.min(FIRST_BACKOFF_MS * 2 ** (this.restarts.length - 1), MAX_BACKOFF_MS) : 0;
    this.restarts.push(now);
    this.logger.error(
      `nginx master ${dead.pid} exited (${how}); ${delay ? `starting another in ${delay} ms` : 'a new master takes over its listening sockets now'}, on the last config the edge installed`,
    );
    let retired: Promise<void> | undefined;
    for (;;) {
      if (delay) await sleep(delay);
      if (this.closed) return;
      try {
        // Without a socket of its own the keeper must have the old workers close the port first.
        if (this.missing.length) ({ retired } = await this.acquireMissing(await this.groupMembers(dead.pgrp)));
        await this.launch();
        break;
      } catch (error) {
        delay = Math.min(Math.max(delay * 2, FIRST_BACKOFF_MS), MAX_BACKOFF_MS);
        this.logger.error(`nginx restart failed: ${(error as Error).message.slice(0, 500)}; trying again in ${delay} ms`);
      }
    }
    this.logger.log(`nginx data plane: master ${this.master?.pid} took over from ${dead.pid} in ${Date.now() - now} ms`);
    await (retired ?? this.retire(await this.groupMembers(dead.pgrp)));
  }
}

/** What must not change for a config file to serve as the start-up one: the listen addresses and the edge's port. */
function frame(text: string): string {
  const listens = [...new Set([...text.matchAll(/^\s*listen\s+(\S+?);?(\s|$)/gm)].map((m) => m[1]))].sort();
  const edge = /upstream slipway_edge \{\s*server (\S+)/.exec(text)?.[1] ?? '';
  return `${listens.join(',')}|${edge}`;
}
