import { access, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseSandboxSubnet, sandboxAddress, type SandboxSubnet } from '@slipway/sandbox';
import type { DataPlaneConfig } from '../config.js';
import { SLOT_SWITCH_MS, isRenderableHost, isRenderablePath, type Site, type TlsInput } from './nginx-config.js';
import { NginxPlane, type Reloaded } from './nginx-plane.js';
import { nginxMissing } from './nginx-process.js';
import { SlotPorts, connectionsTo } from './slots.js';
import { materializeStaticTree, type StaticTree } from './static-tree.js';

/** What EdgePlane reads of the edge's configuration. */
export type EdgePlaneConfig = Pick<
  DataPlaneConfig,
  | 'NGINX_BIN'
  | 'HOST'
  | 'PORT'
  | 'EDGE_INTERNAL_PORT'
  | 'APPS_SCHEME'
  | 'NGINX_WORKERS'
  | 'EDGE_NGINX_OWNER'
  | 'NGINX_USER'
  | 'RUNTIME_NETWORK_SUBNET'
  | 'DRAIN_GRACE_MS'
>;

/** An application as the edge routes to it (platform-data's `LiveRoute` is one). */
export interface PlaneRoute {
  applicationId: string;
  release: { id: string; kind: 'static' | 'node'; spec: { spaFallback?: boolean } } | null;
}

/** Where the edge's proxy reaches an application's live Node release. */
export interface PlaneUpstream {
  host: string;
  port: number;
}

export interface PlaneSources {
  /** The edge's routing table: every application with the hosts it answers at. */
  router: { entries(): Iterable<{ route: PlaneRoute; hosts: string[] }> };
  upstream(applicationId: string): PlaneUpstream | undefined;
  /** The file nginx counts the application's requests in (runtime/usage-meter.ts), if any. */
  usageLog?(applicationId: string): string | undefined;
}

/** What a sync did: a reload (old workers to wait for) and/or slot switches (old ports to drain). */
export interface Synced {
  reloaded?: Reloaded;
}

/** Where the edge keeps the plane's files under RUNTIME_DIR. */
export const planeDirs = (runtimeDir: string) => ({ state: join(runtimeDir, 'nginx'), trees: join(runtimeDir, 'nginx-static') });

/** `{slug}.{domain}` with the domain's port dropped (nginx matches server names without it). */
function hostName(host: string): string {
  return host.replace(/:\d+$/, '');
}

/**
 * The edge's side of the nginx data plane: renders the route table (hosts → Node upstream or
 * static tree) into nginx's config and reloads it when the config text changes. Swaps avoid
 * reloads (which close idle keep-alive client connections): a Node application has two slot
 * ports in the config and a swap flips a marker file nginx checks (at most SLOT_SWITCH_MS late). A static swap is
 * a reload (the root names the release's tree: a link in the root path, renamed at a swap,
 * stops Debian's brotli_static module from finding forms under disable_symlinks). Hosts nginx
 * cannot hold literally, static releases it cannot serve (links to directories), apps without a
 * healthy process and unknown hosts are left to this Node edge (nginx's default server).
 */
export class EdgePlane {
  private readonly trees = new Map<string, Promise<StaticTree | null>>();
  private readonly plane: NginxPlane;
  private readonly slots: SlotPorts;
  private started = false;
  private readonly dirs: ReturnType<typeof planeDirs>;
  private subnet?: SandboxSubnet;

  constructor(
    private readonly config: EdgePlaneConfig,
    runtimeDir: string,
    private readonly sources: PlaneSources,
  ) {
    this.dirs = planeDirs(runtimeDir);
    this.slots = new SlotPorts(join(this.dirs.state, 'slots.json'));
    this.plane = new NginxPlane({
      bin: config.NGINX_BIN,
      stateDir: this.dirs.state,
      listen: { host: config.HOST, port: config.PORT },
      fallback: { host: '127.0.0.1', port: config.EDGE_INTERNAL_PORT },
      scheme: config.APPS_SCHEME,
      workers: config.NGINX_WORKERS,
      owner: config.EDGE_NGINX_OWNER,
      workerUser: config.NGINX_USER,
    });
  }

  /** Refuses to start without nginx (one line), before anything else starts. */
  static check(config: Pick<DataPlaneConfig, 'NGINX_BIN'>): void {
    const missing = nginxMissing(config.NGINX_BIN);
    if (missing) throw new Error(missing);
  }

  /** nginx's tree for a static release (built once), or null when the Node edge must serve it. */
  staticTree(releaseId: string, releaseDir: string): Promise<StaticTree | null> {
    let tree = this.trees.get(releaseId);
    if (!tree) {
      tree = materializeStaticTree(releaseDir, this.dirs.trees, releaseId).then((t) =>
        t && isRenderablePath(t.root) && isRenderablePath(t.ownCompressedRoot) ? t : null,
      );
      tree.catch(() => this.trees.delete(releaseId));
      this.trees.set(releaseId, tree);
    }
    return tree;
  }

  /** The port a new release of the application should listen on: its free slot (a swap without reload), or undefined (any port). */
  async portFor(applicationId: string): Promise<number | undefined> {
    if (!this.started) return undefined;
    return this.slots.freeSlot(applicationId, this.sources.upstream(applicationId)?.port);
  }

  /** nginx's state directory (its config, pid file, slot markers, the status feed's port). */
  get stateDir(): string {
    return this.dirs.state;
  }

  /** Where nginx sends its 5xx answers (watch/nginx-status-feed.ts); set before `start`. */
  setStatusFeed(feed: { port: number; token: string }): void {
    this.plane.setStatusFeed(feed);
  }

  /** nginx writes each application's answers to this file (metrics/nginx-access-log.ts); set before `start`. */
  setMetricsLog(file: string): void {
    this.plane.setMetricsLog(file);
  }

  /** Starts or adopts nginx once this edge listens on its internal port. */
  async start(internalPort: number): Promise<void> {
    await mkdir(join(this.dirs.state, 'slot-b'), { recursive: true, mode: 0o755 });
    await this.slots.load();
    const { sites, switches } = await this.sites();
    await this.plane.start(sites, { host: '127.0.0.1', port: internalPort });
    await this.flip(switches);
    this.started = true;
  }

  /**
   * Brings nginx to the current table: the config (reloaded only when its text changed, e.g. a new
   * application or host), then the slot switches. Resolves once nginx
   * routes by it.
   */
  async sync(): Promise<Synced | undefined> {
    if (!this.started) return undefined;
    const { sites, switches } = await this.sites();
    const reloaded = await this.plane.apply(sites);
    // The config names both slots: now the slot switches.
    await this.flip(switches);
    return reloaded.oldWorkers.length ? { reloaded } : {};
  }

  /** After a swap: nothing nginx was proxying to `oldPort` is still going (old workers gone, no connection left), at most `graceMs`. */
  async drained(synced: Synced | undefined, oldPort: number, graceMs: number): Promise<boolean> {
    const deadline = Date.now() + graceMs;
    if (synced?.reloaded && !(await this.plane.drained(synced.reloaded, graceMs))) return false;
    for (let wait = 20; (await connectionsTo(oldPort)) > 0; wait = Math.min(wait * 2, 200)) {
      if (Date.now() >= deadline) return false;
      await new Promise((r) => setTimeout(r, wait));
    }
    return true;
  }

  /** Sets the markers; when one changed, resolves once every nginx worker routes by it. */
  private async flip(switches: (() => Promise<boolean>)[]): Promise<void> {
    let changed = false;
    for (const flip of switches) changed = (await flip()) || changed;
    if (changed) await new Promise((r) => setTimeout(r, SLOT_SWITCH_MS + 100));
  }

  private async sites(): Promise<{ sites: Site[]; switches: (() => Promise<boolean>)[] }> {
    const sites: Site[] = [];
    const switches: (() => Promise<boolean>)[] = [];
    for (const { route, hosts } of this.sources.router.entries()) {
      const names = [...new Set(hosts.map(hostName))].filter(isRenderableHost);
      const release = route.release;
      if (!release || !names.length) continue;
      const id = route.applicationId.replace(/-/g, '');
      if (release.kind === 'node') {
        const upstream = this.sources.upstream(route.applicationId);
        if (!upstream) continue;
        const slots = await this.slots.slotsFor(route.applicationId, upstream.port);
        const marker = join(this.dirs.state, 'slot-b', id);
        switches.push(() => this.setMarker(marker, upstream.port === slots.b));
        const usageLog = this.sources.usageLog?.(route.applicationId);
        const at = (port: number) => ({ host: this.slotHost(upstream, port), port });
        sites.push({
          kind: 'proxy',
          id,
          hosts: names,
          upstream: at(slots.a),
          alternate: { upstream: at(slots.b), whenFileExists: marker },
          ...(usageLog ? { usageLog } : {}),
        });
        continue;
      }
      const tree = await this.trees.get(release.id)?.catch(() => null);
      if (!tree) continue;
      // The release's own tree: a static swap changes the root (a reload; see the class comment).
      sites.push({
        kind: 'static',
        id,
        hosts: names,
        root: tree.root,
        ownCompressedRoot: tree.ownCompressedRoot,
        spaFallback: Boolean(release.spec.spaFallback),
      });
    }
    await this.slots.save();
    return { sites, switches };
  }

  /**
   * The address of the release on a slot port, by the live release's: on the sandbox's kernel
   * path each port has its own address in RUNTIME_NETWORK_SUBNET (sandbox-link.ts: the next
   * release's is known before it starts, so the swap stays a marker, not a reload); otherwise the
   * live one's (the host's loopback).
   */
  private slotHost(live: PlaneUpstream, port: number): string {
    const subnet = (this.subnet ??= parseSandboxSubnet(this.config.RUNTIME_NETWORK_SUBNET));
    return live.host === sandboxAddress(subnet, live.port) ? sandboxAddress(subnet, port) : live.host;
  }

  /** True when the marker changed. */
  private async setMarker(path: string, on: boolean): Promise<boolean> {
    const was = await access(path).then(
      () => true,
      () => false,
    );
    if (on === was) return false;
    if (on) await writeFile(path, '', { flag: 'a' });
    else await rm(path, { force: true });
    return true;
  }

  /**
   * The certificates changed (tls/edge-tls.ts): nginx gets HTTPS servers for them. A config whose
   * text did not change (a renewal: same files, read at each handshake) is not reloaded.
   */
  async setTls(tls: TlsInput | undefined): Promise<void> {
    this.plane.setTls(tls);
    await this.sync();
  }

  async close(): Promise<void> {
    this.started = false;
    await this.plane.close(this.config.DRAIN_GRACE_MS);
  }
}
