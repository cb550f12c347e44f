import { join } from 'node:path';
import type { EdgeConfig } from '../config.js';
import type { Upstream } from '../proxy/proxy.js';
import type { HostRouter } from '../routing/host-router.js';
import { isRenderableHost, isRenderablePath, type Site } from './nginx-config.js';
import { NginxPlane, type Reloaded } from './nginx-plane.js';
import { nginxMissing } from './nginx-process.js';
import { materializeStaticTree, type StaticTree } from './static-tree.js';

export interface PlaneSources {
  router: HostRouter;
  upstream(applicationId: string): Upstream | undefined;
}

/** Where the edge keeps the plane's files under RUNTIME_DIR. */
export const planeDirs = (runtimeDir: string) => ({ state: join(runtimeDir, 'nginx'), trees: join(runtimeDir, 'nginx-static') });

/** `{slug}.{domain}` with the domain's port dropped (nginx matches server names without it). */
function hostName(host: string): string {
  return host.replace(/:\d+$/, '');
}

/**
 * The edge's side of the nginx data plane: renders the route table (hosts → Node upstream or
 * static tree) into nginx's config and reloads it after every change. Hosts nginx cannot hold
 * literally, releases it cannot serve (a static release with links to directories), apps without
 * a healthy process and unknown hosts are left to this Node edge (nginx's default server).
 */
export class EdgePlane {
  private readonly trees = new Map<string, Promise<StaticTree | null>>();
  private readonly plane: NginxPlane;
  private started = false;
  private readonly treesDir: string;

  constructor(
    private readonly config: EdgeConfig,
    runtimeDir: string,
    private readonly sources: PlaneSources,
  ) {
    const dirs = planeDirs(runtimeDir);
    this.treesDir = dirs.trees;
    this.plane = new NginxPlane({
      bin: config.NGINX_BIN,
      stateDir: dirs.state,
      listen: { host: config.HOST, port: config.PORT },
      fallback: { host: '127.0.0.1', port: config.EDGE_INTERNAL_PORT },
      scheme: config.APPS_SCHEME,
      workers: config.NGINX_WORKERS,
      owner: config.EDGE_NGINX_OWNER,
    });
  }

  /** Refuses to start without nginx (one line), before anything else starts. */
  static check(config: EdgeConfig): void {
    const missing = nginxMissing(config.NGINX_BIN);
    if (missing) throw new Error(missing);
  }

  /** nginx's tree for a static release (built once), or null when the Node edge must serve it. */
  staticTree(releaseId: string, releaseDir: string): Promise<StaticTree | null> {
    let tree = this.trees.get(releaseId);
    if (!tree) {
      tree = materializeStaticTree(releaseDir, this.treesDir, releaseId).then((t) => (t && isRenderablePath(t.root) && isRenderablePath(t.ownCompressedRoot) ? t : null));
      tree.catch(() => this.trees.delete(releaseId));
      this.trees.set(releaseId, tree);
    }
    return tree;
  }

  /** Starts or adopts nginx once this edge listens on its internal port. */
  async start(internalPort: number): Promise<void> {
    await this.plane.start(await this.sites(), { host: '127.0.0.1', port: internalPort });
    this.started = true;
  }

  /** Renders the current table and reloads nginx; resolves once new workers serve it (undefined before start). */
  async sync(): Promise<Reloaded | undefined> {
    if (!this.started) return undefined;
    return this.plane.apply(await this.sites());
  }

  /** After a swap: the old workers finished the requests they were proxying to the old release (at most `graceMs`). */
  drained(reloaded: Reloaded | undefined, graceMs: number): Promise<boolean> {
    return reloaded ? this.plane.drained(reloaded, graceMs) : Promise.resolve(true);
  }

  private async sites(): Promise<Site[]> {
    const sites: Site[] = [];
    for (const { route, hosts } of this.sources.router.entries()) {
      const names = [...new Set(hosts.map(hostName))].filter(isRenderableHost);
      const release = route.release;
      if (!release || !names.length) continue;
      const id = route.applicationId.replace(/-/g, '');
      if (release.kind === 'node') {
        const upstream = this.sources.upstream(route.applicationId);
        if (upstream) sites.push({ kind: 'proxy', id, hosts: names, upstream: { host: upstream.host, port: upstream.port } });
        continue;
      }
      const tree = await this.trees.get(release.id)?.catch(() => null);
      if (tree) sites.push({ kind: 'static', id, hosts: names, root: tree.root, ownCompressedRoot: tree.ownCompressedRoot, spaFallback: Boolean(release.spec.spaFallback) });
    }
    return sites;
  }

  async close(): Promise<void> {
    this.started = false;
    await this.plane.close(this.config.DRAIN_GRACE_MS);
  }
}
