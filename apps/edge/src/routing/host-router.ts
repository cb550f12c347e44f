import type { LiveRoute } from '@slipway/platform-data';

/**
 * The in-memory routing table: `Host` → application. `{slug}.{domain}` for every publishing
 * domain (compared with the port when the domain names one), and custom domains (port ignored).
 * Lookups are one Map get; updates replace one application's entries.
 */
export class HostRouter {
  private readonly byHost = new Map<string, LiveRoute>();
  private readonly byApp = new Map<string, { route: LiveRoute; hosts: string[] }>();

  constructor(private readonly domains: string[]) {}

  set(route: LiveRoute): void {
    this.remove(route.applicationId);
    const hosts = [...this.domains.map((d) => `${route.slug}.${d}`), ...route.hostnames];
    for (const host of hosts) this.byHost.set(host, route);
    this.byApp.set(route.applicationId, { route, hosts });
  }

  replaceAll(routes: LiveRoute[]): void {
    this.byHost.clear();
    this.byApp.clear();
    for (const route of routes) this.set(route);
  }

  remove(applicationId: string): void {
    const existing = this.byApp.get(applicationId);
    if (!existing) return;
    for (const host of existing.hosts) if (this.byHost.get(host) === existing.route) this.byHost.delete(host);
    this.byApp.delete(applicationId);
  }

  /** Every application's route (what the certificates are kept for). */
  routes(): LiveRoute[] {
    return [...this.byApp.values()].map((entry) => entry.route);
  }

  /** Every application with the hosts it answers at (the nginx plane renders them). */
  entries(): IterableIterator<{ route: LiveRoute; hosts: string[] }> {
    return this.byApp.values();
  }

  app(applicationId: string): LiveRoute | undefined {
    return this.byApp.get(applicationId)?.route;
  }

  resolve(hostHeader: string | undefined): LiveRoute | undefined {
    if (!hostHeader) return undefined;
    const host = hostHeader.toLowerCase();
    const exact = this.byHost.get(host);
    if (exact) return exact;
    const colon = host.lastIndexOf(':');
    return colon > 0 && !host.endsWith(']') ? this.byHost.get(host.slice(0, colon)) : undefined;
  }
}
