import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join, resolve } from 'node:path';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { Logger } from '@nestjs/common';
import type { BlobStore } from '@slipway/blob';
import type { Keyring } from '@slipway/crypto';
import { EdgePlane, RemoteRuntimeDriver, loopbackPort, runningMaster } from '@slipway/data-plane';
import {
  AppMetrics,
  asApplicationId,
  asReleaseId,
  openPlatformData,
  type LiveRoute,
  type LiveRoutes,
  type PlatformData,
  type RouteTo,
} from '@slipway/platform-data';
import { redisConnection, routesChannel } from '@slipway/messaging';
import { LocalDriver, type PortFound, type ReleaseToRun, type RuntimeDriver } from '@slipway/runtime';
import { DependencyProbe } from '@slipway/service-kit';
import type { Redis } from 'ioredis';
import { startConcurrency, type EdgeConfig } from './config.js';
import { AppLogs } from './internal/app-logs.js';
import { handleInternal } from './internal/internal-api.js';
import { EDGE_HTTP_OPTIONS, framingRefusal, refusalBytes, refusalHead } from './proxy/framing.js';
import { ReverseProxy } from './proxy/proxy.js';
import { HostRouter } from './routing/host-router.js';
import { angularAllowedHosts, appEnvironment } from './runtime/app-environment.js';
import { NodeApps } from './runtime/node-apps.js';
import { ReleaseTrees } from './runtime/release-trees.js';
import { reportBringUp } from './runtime/bring-up.js';
import { StartQueue } from './runtime/start-queue.js';
import { UsageMeter } from './runtime/usage-meter.js';
import { createRuntimeDriver, fixedPortOf } from './runtime/runtime-driver.js';
import { StaticSites } from './static/static-sites.js';
import { EdgeTls } from './tls/edge-tls.js';
import { EdgeMetrics } from './metrics/edge-metrics.js';
import { NginxAccessLog, metricsLogFile } from './metrics/nginx-access-log.js';
import { FirstMinuteWatch } from './watch/first-minute-watch.js';
import { NginxStatusFeed } from './watch/nginx-status-feed.js';

/** How often the edge looks for unpacked trees of pruned releases, and how long one must have been unused. */
const RELEASE_TREES_SWEEP_MS = 5 * 60_000;
const RELEASE_TREES_IDLE_MS = 10 * 60_000;
/** How often request counts are folded into the kept usage scores, and how fast old requests fade. */
const USAGE_FOLD_MS = 60_000;
const USAGE_HALF_LIFE_MS = 24 * 3600_000;
const NOT_FOUND_PAGE =
  '<!doctype html><html><head><meta charset="utf-8"><title>Not found</title></head><body><h1>404</h1><p>There is no application at this address.</p></body></html>\n';

/**
 * The edge: one plain Node HTTP server (no framework on the request path) that routes by Host to
 * static releases or proxied Node releases, plus health and the internal hand-off endpoint.
 */
export class EdgeServer {
  private readonly logger = new Logger('edge');
  /** Unpacked trees of pruned releases, removed every RELEASE_TREES_SWEEP_MS (runtime/release-trees.ts). */
  private releaseTrees?: ReleaseTrees;
  private releaseTreesTimer?: NodeJS.Timeout;
  private readonly router: HostRouter;
  /** The table nginx is given; `router` (what this process answers by) follows once nginx applied it. */
  private readonly planeRouter: HostRouter;
  private readonly routes: LiveRoutes;
  private readonly blobs: BlobStore;
  private readonly statics: StaticSites;
  private readonly proxy: ReverseProxy;
  private readonly keyring: Keyring;
  private readonly runtimeDir: string;
  private server?: Server;
  private subscriber?: Redis;
  private nodeApps!: NodeApps<RouteTo>;
  private driver!: RuntimeDriver;
  private tls?: EdgeTls;
  private closing = false;
  /** The apps' runtime logs (local driver: the rings under `<runtime dir>/logs`). */
  private appLogs?: AppLogs;
  /**
   * Per application, the release its requests reach through THIS process now: the route applied
   * here and by nginx, the Node release switched to. Not a copy of the database (which says what
   * should be live: `live_release_id`), and never read in its place: it is ahead of it between the
   * worker's switch and its commit, and behind it while a release that could not start leaves the
   * previous one serving. The worker waits for it (`appliedRelease`); the tree sweep keeps these.
   */
  private readonly applied = new Map<string, string>();
  /** nginx in front (EDGE_DATA_PLANE=nginx); this process is then its control plane and fallback. */
  private readonly plane?: EdgePlane;
  /** The first minute of each release switched to here (watch/first-minute-watch.ts). */
  private readonly watch: FirstMinuteWatch;
  /** nginx's 5xx answers, for the watch (nginx plane only). */
  private statusFeed?: NginxStatusFeed;
  /** Per-application metrics (EDGE_METRICS=on); with nginx, read from its metrics log. */
  private metrics?: EdgeMetrics;
  private metricsLog?: NginxAccessLog;
  /** Requests per application, kept across restarts: the order releases come back in. */
  private readonly usage: UsageMeter;
  /** Cold starts of Node releases, RUNTIME_START_CONCURRENCY at a time, most used first. */
  private readonly starts: StartQueue;
  /** Releases the runtime supervisor already ran when this edge started: claimed at once, outside the start queue. */
  private adoptable = new Set<string>();

  private constructor(
    private readonly config: EdgeConfig,
    private readonly data: PlatformData,
    private readonly probe: DependencyProbe,
  ) {
    const blobs = data.infrastructure.blobs;
    this.blobs = blobs;
    this.router = new HostRouter(config.APPS_DOMAIN);
    this.planeRouter = new HostRouter(config.APPS_DOMAIN);
    this.routes = data.deployments.liveRoutes;
    this.proxy = new ReverseProxy(config.APPS_SCHEME, config.EDGE_DATA_PLANE === 'nginx');
    this.keyring = data.infrastructure.keyring;
    this.runtimeDir = resolve(config.RUNTIME_DIR ?? join(config.SLIPWAY_HOME ?? '.slipway', 'runtime'));
    this.statics = new StaticSites(blobs, this.runtimeDir, Math.floor(config.STATIC_CACHE_MB * 1024 * 1024));
    if (config.SLIPWAY_RUNTIME_DRIVER === 'local')
      this.appLogs = new AppLogs(join(this.runtimeDir, 'logs'), config.RUNTIME_LOG_FILES, (appId, ids) => this.releasesOf(appId, ids));
    this.watch = new FirstMinuteWatch({
      windowMs: config.RELEASE_WATCH_MS,
      addHazards: (applicationId, releaseId, hazards) =>
        this.data.deployments.releases.addLateHazards(asApplicationId(applicationId), asReleaseId(releaseId), hazards),
    });
    this.usage = new UsageMeter(join(this.runtimeDir, 'usage'), { halfLifeMs: USAGE_HALF_LIFE_MS });
    this.starts = new StartQueue({ concurrency: startConcurrency(config), compare: this.usage.compare });
    if (config.EDGE_DATA_PLANE === 'nginx')
      this.plane = new EdgePlane(config, this.runtimeDir, {
        router: this.planeRouter,
        upstream: (id) => this.nodeApps.upstream(id),
        usageLog: (id) => this.usage.logFor(id),
      });
  }

  static async start(config: EdgeConfig): Promise<EdgeServer> {
    const startedAt = performance.now();
    if (config.EDGE_DATA_PLANE === 'nginx') EdgePlane.check(config);
    // Routes, releases and what a Node release is given (the edge's Redis is its own subscriber).
    // Redis for metrics only: a command fails at once while Redis is away (that interval's counts are lost; no request waits).
    const data = openPlatformData(config, { poolSize: 4, blobs: true, redis: { role: 'best-effort' } });
    // An idle client whose server went away (Postgres restarted) is not fatal: the edge keeps
    // serving routes from memory; said once per event, as before.
    data.infrastructure.pool.on('error', (error) => new Logger('edge').warn(`Postgres: ${error.message}`));
    const probe = new DependencyProbe({ service: 'edge', postgresUrl: config.DATABASE_URL, redisUrl: config.REDIS_URL });
    const edge = new EdgeServer(config, data, probe);
    await edge.listen(startedAt);
    return edge;
  }

  /** The public port (nginx's with the nginx plane). */
  get port(): number {
    return this.plane ? this.config.PORT : this.internalPort;
  }

  private get internalPort(): number {
    return (this.server!.address() as { port: number }).port;
  }

  private async listen(startedAt: number): Promise<void> {
    this.driver = await createRuntimeDriver(this.config, this.blobs, this.runtimeDir, (reason) => {
      if (this.closing) return;
      // No runtime supervisor came back in time (the driver reconnects by itself first), or one came back without a release as it was: a fresh edge starts or claims the apps anew.
      this.logger.error(`${reason}: exiting so that the restarted edge starts the apps again`);
      process.exit(1);
    });
    const plane = this.plane;
    const switched = plane
      ? {
          switched: () => plane.sync(),
          drained: (r: unknown, old: { port: number }, graceMs: number) => plane.drained(r as Awaited<ReturnType<EdgePlane['sync']>>, old.port, graceMs),
        }
      : undefined;
    this.adoptable = await this.alreadyRunning();
    const turns = { queue: this.starts, running: (releaseId: string) => this.adoptable.delete(releaseId) };
    this.nodeApps = new NodeApps<RouteTo>(
      this.driver,
      this.config.DRAIN_GRACE_MS,
      (route) => this.describe(route),
      (release) => this.proxy.forget(release.host, release.port),
      switched,
      turns,
    );
    await this.usage.load().catch((error: Error) => this.logger.warn(`usage counts not read (releases start in database order): ${error.message}`));
    this.usage.start(USAGE_FOLD_MS);
    if (this.config.EDGE_METRICS === 'on') {
      this.metrics = new EdgeMetrics(new AppMetrics(this.data.infrastructure.redis, this.config.QUEUE_PREFIX), () => this.nodeApps.liveReleases());
      this.metrics.start();
    }
    if (this.config.EDGE_HTTPS === 'acme') this.tls = await EdgeTls.start(this.config, this.plane);
    this.subscriber = redisConnection(this.config.REDIS_URL, 'subscriber');
    this.subscriber.on('message', (_channel, message) => void this.onRoutesMessage(message));
    await this.subscriber.subscribe(routesChannel(this.config.QUEUE_PREFIX).name);
    // Resubscribing on reconnect can miss messages: reload everything when Redis comes back.
    this.subscriber.on('ready', () => void this.reloadAll().catch((error: Error) => this.logger.error(`route reload failed: ${error.message}`)));
    await this.reloadAll(startedAt);
    this.sweepReleaseTrees();
    this.server = createServer(EDGE_HTTP_OPTIONS, (req, res) => void this.handle(req, res));
    this.server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => this.upgrade(req, socket, head));
    if (this.plane) {
      // Behind nginx: this process answers on the loopback only, nginx on the public address.
      await new Promise<void>((ok) => this.server!.listen(this.config.EDGE_INTERNAL_PORT, '127.0.0.1', ok));
      if (this.metrics) {
        const stateDir = this.plane.stateDir;
        this.plane.setMetricsLog(metricsLogFile(stateDir));
        this.metricsLog = new NginxAccessLog(
          metricsLogFile(stateDir),
          () => runningMaster(stateDir),
          (applicationId, status, ms) => this.metrics!.record(applicationId, status, ms),
        );
      }
      if (this.config.RELEASE_WATCH_MS > 0) {
        this.statusFeed = await NginxStatusFeed.open(this.plane.stateDir, (applicationId, status, method, path) =>
          this.watch.answered(applicationId, status, method, path),
        );
        this.plane.setStatusFeed(this.statusFeed.address);
      }
      await this.plane.start(this.internalPort);
      this.metricsLog?.start();
    } else await new Promise<void>((ok) => this.server!.listen(this.config.PORT, this.config.HOST, ok));
    const behind = this.plane ? `; nginx data plane in front, this process on 127.0.0.1:${this.internalPort}` : '';
    this.logger.log(
      `edge listening on http://${this.config.HOST}:${this.port} (apps at *.${this.config.APPS_DOMAIN.join(', *.')}${behind}; ${Math.round(process.uptime() * 1000)} ms after the process started)`,
    );
  }

  private sweepReleaseTrees(): void {
    const trees = new ReleaseTrees(
      this.runtimeDir,
      {
        existing: (ids) => this.data.deployments.releases.existing(ids),
        inUse: () => [...this.applied.values(), ...this.statics.stats().sites, ...this.nodeApps.releaseIds()],
      },
      RELEASE_TREES_IDLE_MS,
      this.logger,
    );
    this.releaseTrees = trees;
    this.releaseTreesTimer = setInterval(() => {
      trees.sweep().catch((error: Error) => this.logger.warn(`could not remove pruned releases' trees: ${error.message}`));
    }, RELEASE_TREES_SWEEP_MS);
    this.releaseTreesTimer.unref();
  }

  private async onRoutesMessage(message: string): Promise<void> {
    try {
      const parsed = routesChannel(this.config.QUEUE_PREFIX).decode(message);
      if (parsed.applicationId) await this.reload(parsed.applicationId);
      else await this.reloadAll();
    } catch (error) {
      this.logger.error(`route update failed: ${(error as Error).message}`);
    }
  }

  /**
   * Every route from the database. `bringUp` (this edge's start, at that time): its Node releases
   * come up in the start queue's order and the time until all answer is logged.
   */
  private async reloadAll(bringUp?: number): Promise<void> {
    const all = await this.routes.routes();
    this.usage.keepOnly(new Set(all.map((r) => r.applicationId)));
    const statics = all.filter((r) => r.release?.kind === 'static');
    await Promise.all(statics.map((r) => this.prepareStatic(r.release!).catch(() => undefined)));
    this.planeRouter.replaceAll(all);
    await this.syncPlane();
    this.router.replaceAll(all);
    this.tls?.routesChanged(this.router.routes());
    this.statics.replaceLive(new Map(statics.map((r) => [r.applicationId, r.release!.id])));
    const nodes = all.filter((r) => r.release?.kind === 'node');
    const adopted = nodes.filter((r) => this.adoptable.has(r.release!.id)).length;
    // In one loop: the queue orders them all (most used first) before the first one starts.
    const activations = all.map((route) => ({ route, answered: this.activateNode(route, true) }));
    if (bringUp === undefined || !nodes.length) return;
    void reportBringUp(
      activations.filter((a) => a.route.release?.kind === 'node').map((a) => a.answered),
      { startedAt: bringUp, adopted, queue: this.starts, logger: this.logger, stopped: () => this.closing },
    );
  }

  /** Unpacked (and, with nginx, its nginx tree built) before any route points at it. */
  private async prepareStatic(release: NonNullable<LiveRoute['release']>): Promise<void> {
    await this.statics.site(release);
    await this.plane?.staticTree(release.id, join(this.runtimeDir, 'releases', release.id));
  }

  /** nginx follows the route table; a config it refuses is logged and the last good one keeps serving. */
  private async syncPlane(): Promise<void> {
    await this.plane?.sync().catch((error: Error) => this.logger.error(`data plane not updated: ${error.message}`));
  }

  /**
   * The worker's switch, before it commits the release as live (a later routes message reloads
   * from the database). One read: the release's route, applied and, for a Node release, started
   * from what was read (`describe`).
   */
  private async switchTo(applicationId: string, releaseId: string): Promise<boolean> {
    const route = await this.routes.routeTo(asReleaseId(releaseId));
    if (!route || route.applicationId !== applicationId) return false;
    void this.usage.deployed(applicationId).catch((error: Error) => this.logger.warn(`usage counts not written: ${error.message}`));
    await this.apply(applicationId, route);
    const switched = this.applied.get(applicationId) === releaseId;
    if (switched && route.release.kind === 'node' && this.config.RELEASE_WATCH_MS > 0) {
      const running = this.nodeApps.running(applicationId);
      // Redacted with what it runs with: the environment read once, when it started.
      const environment = (running && this.nodeApps.startedWith(running)?.env) ?? {};
      this.watch.begin(applicationId, releaseId, running, environment);
    }
    return switched;
  }

  /** The application's route as the database has it now (a routes message). */
  private async reload(applicationId: string): Promise<void> {
    const [route] = await this.routes.routes(asApplicationId(applicationId));
    await this.apply(applicationId, route);
  }

  /** Static: unpack first, then switch. Node: the old process serves until the new one is healthy. None: the application is gone. */
  private async apply(applicationId: string, route: LiveRoute | undefined): Promise<void> {
    // What it serves until now is in use until now: a Node release draining after this swap keeps its tree.
    this.releaseTrees?.touch();
    if (!route) {
      this.planeRouter.remove(applicationId);
      await this.syncPlane();
      this.router.remove(applicationId);
      this.tls?.routesChanged(this.router.routes());
      this.statics.setLive(applicationId, undefined);
      await this.nodeApps.retire(applicationId);
      this.applied.delete(applicationId);
      return;
    }
    const live = route.release?.kind === 'static' ? route.release : undefined;
    if (live) await this.prepareStatic(live);
    // nginx first: once this edge answers by the new table, nginx does too (no window where one
    // of them serves the new release and the other the old one, or nothing).
    this.planeRouter.set(route);
    await this.syncPlane();
    this.router.set(route);
    this.tls?.routesChanged(this.router.routes());
    this.statics.setLive(applicationId, live?.id);
    await this.activateNode(route);
  }

  /**
   * Node releases once switched to, static ones once routed: what `appliedRelease` answers (the
   * worker waits for it). `background`: nobody waits for this start yet (the edge's own start).
   * False when the release could not be started.
   */
  private async activateNode(route: LiveRoute, background = false): Promise<boolean> {
    try {
      if (route.release?.kind === 'node') await this.nodeApps.activate({ ...route, release: route.release }, { background });
      else await this.nodeApps.retire(route.applicationId);
      if (route.release) this.applied.set(route.applicationId, route.release.id);
      else this.applied.delete(route.applicationId);
      return true;
    } catch (error) {
      // Stopping: the starts still waiting their turn were dropped, not failed.
      if (!this.closing)
        this.logger.error(`${route.slug}: release ${route.release?.id} could not be started; the previous one keeps serving: ${(error as Error).message}`);
      return false;
    }
  }

  /** Which of `releaseIds` are releases of the application (whose logs its owner may read). */
  private async releasesOf(applicationId: string, releaseIds: string[]): Promise<string[]> {
    return this.data.deployments.releases.ofApplication(applicationId, releaseIds);
  }

  /** What the runtime supervisor runs already (an edge restarted beside it): those are adopted, not started. */
  private async alreadyRunning(): Promise<Set<string>> {
    if (!(this.driver instanceof RemoteRuntimeDriver)) return new Set();
    const running = await this.driver.list().catch((error: Error) => {
      this.logger.warn(`could not list the runtime's releases (each is claimed in its turn): ${error.message}`);
      return [];
    });
    return new Set(running.map((r) => r.releaseId));
  }

  /** What a Node release runs with, from its route as read by the start, switch or reload that asked for it. */
  private async describe(route: RouteTo): Promise<ReleaseToRun> {
    const { release } = route;
    const pooler = this.config.APP_DATABASES_POOLER_URL;
    const { env, hasDatabase } = await appEnvironment(this.data.deployments.inputs, this.keyring, route.applicationId, {
      databaseUrl: pooler ?? this.config.DATABASE_URL,
      authPublicUrl: this.config.AUTH_PUBLIC_URL,
    });
    // Only an application that has a database reaches the pooler's port (never Postgres's own).
    const hostPorts = hasDatabase && pooler ? loopbackPort(pooler) : [];
    // Angular's SSR server answers only its own hosts; a project that sets the list itself keeps its own.
    if (release.spec['framework'] === 'angular' && env['NG_ALLOWED_HOSTS'] === undefined)
      env['NG_ALLOWED_HOSTS'] = angularAllowedHosts(route.slug, this.config.APPS_DOMAIN, route.hostnames);
    // With nginx, the application's free slot: the swap is then a switch nginx checks per request, not a reload.
    const port = await this.plane?.portFor(route.applicationId);
    const fixedPort = fixedPortOf(release.spec);
    return {
      releaseId: release.id,
      applicationId: route.applicationId,
      slug: route.slug,
      artifactKey: release.artifactKey,
      startCommand: release.spec.commands?.start ?? 'npm start',
      env,
      nodeVersion: typeof release.spec['nodeVersion'] === 'string' ? release.spec['nodeVersion'] : null,
      ...(port ? { port } : {}),
      hostPorts,
      ...(fixedPort ? { fixedPort } : {}),
    };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Framing Node's parser accepts and RFC 9112 does not: refused before anything reads the body.
    const refusal = framingRefusal(req);
    if (refusal) {
      res.writeHead(refusal.status, refusalHead(refusal)).end(refusal.message);
      return;
    }
    try {
      // ACME HTTP-01: answered for the tokens of this edge's own orders, on any host, before routing.
      const keyAuthorization = this.tls?.challenges.answer(req.url);
      if (keyAuthorization !== undefined) {
        res
          .writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(keyAuthorization), 'cache-control': 'no-store' })
          .end(keyAuthorization);
        return;
      }
      const route = this.router.resolve(req.headers.host);
      if (!route) {
        const handled = await handleInternal(req, res, {
          masterKey: this.config.SLIPWAY_MASTER_KEY,
          probe: this.probe,
          startRelease: (id) => this.startRelease(id),
          sandbox: this.sandboxStatus(),
          logs: async (id) =>
            this.nodeApps.logs(id) ?? (this.driver instanceof LocalDriver || this.driver instanceof RemoteRuntimeDriver ? this.driver.readLog(id) : undefined),
          artifact: (id) => this.artifact(id),
          staticCache: () => this.statics.stats(),
          tls: () => this.tls?.status() ?? { mode: 'off' },
          appliedRelease: (id) => this.applied.get(id) ?? null,
          switchRelease: (appId, releaseId) => this.switchTo(appId, releaseId),
          appLogs: this.appLogs,
        });
        if (!handled) this.notFound(res);
        return;
      }
      const release = route.release;
      if (!release) return this.notFound(res);
      this.observe(route.applicationId, req, res);
      if (release.kind === 'static') return await (await this.statics.site(release)).serve(req, res);
      // Requests nginx did not proxy itself (none in front, or the app not running yet) count here.
      this.usage.count(route.applicationId);
      const upstream = this.nodeApps.upstream(route.applicationId);
      if (!upstream) {
        // Waiting its turn after a restart: someone wants it now, so it starts next.
        this.starts.bump(route.applicationId);
        res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'retry-after': '1' }).end('The application is starting.\n');
        return;
      }
      this.proxy.forward(req, res, upstream);
    } catch (error) {
      this.logger.error(`request failed: ${(error as Error).message}`);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('Internal Server Error\n');
      else res.destroy();
    }
  }

  /**
   * An answer of an application as this process gives it (with nginx in front, nginx counts what
   * it answers itself and this process what it is given: nothing twice): for the metrics, and
   * for the first-minute watch while the application is in its window.
   */
  private observe(applicationId: string, req: IncomingMessage, res: ServerResponse): void {
    const watched = this.watch.watching(applicationId);
    const metrics = this.metrics;
    if (!watched && !metrics) return;
    const started = performance.now();
    res.once('finish', () => {
      metrics?.record(applicationId, res.statusCode, performance.now() - started);
      if (watched) this.watch.answered(applicationId, res.statusCode, req.method ?? '', (req.url ?? '/').split('?')[0]!);
    });
  }

  private upgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const refusal = framingRefusal(req);
    if (refusal) {
      socket.end(refusalBytes(refusal));
      return;
    }
    const route = this.router.resolve(req.headers.host);
    const upstream = route?.release?.kind === 'node' ? this.nodeApps.upstream(route.applicationId) : undefined;
    if (!upstream) {
      socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      return;
    }
    this.proxy.upgrade(req, socket, head, upstream);
  }

  /** A release's artifact, for the pods of the kubernetes driver (internal API checks the token). */
  private async artifact(releaseId: string): Promise<Readable | undefined> {
    const release = await this.routes.release(asReleaseId(releaseId));
    return release ? this.blobs.get(release.artifactKey) : undefined;
  }

  private notFound(res: ServerResponse): void {
    res
      .writeHead(404, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(NOT_FOUND_PAGE), 'cache-control': 'no-store' })
      .end(NOT_FOUND_PAGE);
  }

  private sandboxStatus(): { status: 'on' } | { status: 'off'; reason: string } {
    if (this.driver.name !== 'local' || this.config.RUNTIME_SANDBOX === 'on') return { status: 'on' };
    return { status: 'off', reason: 'the operator turned the runtime sandbox off (RUNTIME_SANDBOX=off)' };
  }

  /** The worker's hand-off: one read of the release's route, and a Node release started from it. */
  private async startRelease(releaseId: string): Promise<{ portFound?: PortFound } | 'not-found'> {
    const route = await this.routes.routeTo(asReleaseId(releaseId));
    if (!route) return 'not-found';
    const { release } = route;
    if (release.kind === 'static') {
      await this.statics.prepare(release);
      await this.plane?.staticTree(release.id, join(this.runtimeDir, 'releases', release.id));
      return {};
    }
    const running = await this.nodeApps.prepare(route);
    return running.portFound ? { portFound: running.portFound } : {};
  }

  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.releaseTreesTimer);
    this.watch.close();
    this.statusFeed?.close();
    this.metrics?.close();
    await this.metrics?.flush();
    await this.metricsLog?.close();
    await new Promise<void>((ok) => {
      this.server?.close(() => ok());
      this.server?.closeIdleConnections();
    });
    this.statics.close();
    this.tls?.close();
    this.starts.cancelWaiting('the edge is stopping');
    await this.usage.close();
    await this.plane?.close();
    await this.nodeApps.stopAll();
    await this.proxy.close();
    this.subscriber?.disconnect();
    await this.probe.onModuleDestroy();
    await this.data.close();
  }
}
