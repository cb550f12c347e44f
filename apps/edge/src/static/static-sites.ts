import { join } from 'node:path';
import type { BlobStore } from '@slipway/blob';
import { extractRelease } from '@slipway/runtime';
import type { LiveRelease } from '@slipway/platform-data';
import { StaticCache, type StaticCacheStats } from './static-cache.js';
import { StaticSite } from './static-site.js';

/** A static release the worker prepared stays loaded this long before it must be live. */
const PREPARED_TTL_MS = 10 * 60_000;

/**
 * The static releases this edge serves: unpacked once under `<runtimeDir>/releases/<id>`, one
 * `StaticSite` each, sharing one bounded `StaticCache`. A release that stops being live (route
 * change, swap, rollback, application removed) is unloaded and its cache entries dropped; its
 * directory stays, so a rollback to it is instant.
 */
export class StaticSites {
  private readonly sites = new Map<string, Promise<StaticSite>>();
  /** Application → its live static release, and the set of those releases. */
  private readonly live = new Map<string, string>();
  private readonly liveReleases = new Set<string>();
  private readonly prepared = new Map<string, NodeJS.Timeout>();
  private readonly cache: StaticCache;

  constructor(
    private readonly blobs: BlobStore,
    private readonly runtimeDir: string,
    cacheBytes: number,
  ) {
    this.cache = new StaticCache(cacheBytes);
  }

  site(release: LiveRelease): Promise<StaticSite> {
    let site = this.sites.get(release.id);
    if (!site) {
      const dir = join(this.runtimeDir, 'releases', release.id);
      site = this.blobs
        .get(release.artifactKey)
        .then((artifact) => extractRelease(artifact, dir))
        .then(() => new StaticSite(release.id, dir, Boolean(release.spec.spaFallback), this.cache));
      site.catch(() => this.sites.delete(release.id));
      this.sites.set(release.id, site);
    }
    return site;
  }

  /** The worker's hand-off: unpacked ahead of the route change, kept a while even though not live yet. */
  prepare(release: LiveRelease): Promise<StaticSite> {
    clearTimeout(this.prepared.get(release.id));
    this.prepared.set(release.id, setTimeout(() => this.expire(release.id), PREPARED_TTL_MS).unref());
    return this.site(release);
  }

  /** The application's live static release is now `releaseId` (undefined: none); the previous one is unloaded. */
  setLive(applicationId: string, releaseId: string | undefined): void {
    const previous = this.live.get(applicationId);
    if (previous) this.liveReleases.delete(previous);
    if (releaseId) {
      this.live.set(applicationId, releaseId);
      this.liveReleases.add(releaseId);
      clearTimeout(this.prepared.get(releaseId));
      this.prepared.delete(releaseId);
    } else this.live.delete(applicationId);
    if (previous && previous !== releaseId) this.unloadUnlessUsed(previous);
  }

  /** Every application's live static release at once (a full reload): the others are unloaded. */
  replaceLive(live: Map<string, string>): void {
    this.live.clear();
    this.liveReleases.clear();
    for (const [applicationId, releaseId] of live) this.setLive(applicationId, releaseId);
    for (const releaseId of [...this.sites.keys()]) this.unloadUnlessUsed(releaseId);
  }

  stats(): StaticCacheStats & { sites: string[] } {
    return { ...this.cache.stats(), sites: [...this.sites.keys()] };
  }

  private expire(releaseId: string): void {
    this.prepared.delete(releaseId);
    this.unloadUnlessUsed(releaseId);
  }

  private unloadUnlessUsed(releaseId: string): void {
    if (this.prepared.has(releaseId) || this.liveReleases.has(releaseId)) return;
    const site = this.sites.get(releaseId);
    this.sites.delete(releaseId);
    this.cache.dropRelease(releaseId);
    void site?.then(
      (s) => s.close(),
      () => undefined,
    );
  }

  close(): void {
    for (const timer of this.prepared.values()) clearTimeout(timer);
    this.prepared.clear();
  }
}
