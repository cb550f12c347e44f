import type { ApplicationId, ApplicationsRepository } from '@slipway/platform-data';

export interface OriginEntry {
  origin: string;
  source: 'app' | 'publishing_domain' | 'custom_domain' | 'preview';
  domainId?: string;
}

/**
 * Whether an application may have `hostname` registered as one of its trusted origins besides its
 * own address under the publishing domains (a custom domain, a release address). Never the
 * developer's machine or a name under `localhost` — the sign-in service trusts exactly
 * `localhost`, `127.0.0.1` and `[::1]` by itself while local development is allowed, and a
 * `*.localhost` name is another application's address in development — and never a host under a
 * publishing domain other than the application's own address there: that host is another
 * tenant's application.
 */
export function isClaimableHost(hostname: string, slug: string, appsDomains: string[]): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (
    !host ||
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    /^127\.\d+\.\d+\.\d+$/.test(host) ||
    host === '[::1]' ||
    host === '0.0.0.0' ||
    host === '[::]'
  )
    return false;
  for (const domain of appsDomains) {
    const domainHost = domain.toLowerCase().replace(/:\d+$/, '');
    if ((host === domainHost || host.endsWith(`.${domainHost}`)) && host !== `${slug.toLowerCase()}.${domainHost}`) return false;
  }
  return true;
}

/** A claim of a custom domain; only a verified one (its TXT record was found) is trusted. */
export interface CustomDomainClaim {
  id: string;
  hostname: string;
  verifiedAt: Date | null;
}

/**
 * The application's address under every publishing domain (the first is its own), plus its
 * VERIFIED custom domains that are claimable hosts: an unverified claim proves nothing about who
 * controls the name.
 */
export function applicationOrigins(slug: string, appsDomains: string[], appsScheme: string, customDomains: CustomDomainClaim[]): OriginEntry[] {
  const entries: OriginEntry[] = appsDomains.map((domain, index) => ({
    origin: `${appsScheme}://${slug}.${domain}`.toLowerCase(),
    source: index === 0 ? 'app' : 'publishing_domain',
  }));
  for (const domain of customDomains) {
    if (!domain.verifiedAt) continue;
    if (!isClaimableHost(domain.hostname, slug, appsDomains)) continue;
    entries.push({ origin: `https://${domain.hostname.toLowerCase()}`, source: 'custom_domain', domainId: domain.id });
    if (appsScheme === 'http') entries.push({ origin: `http://${domain.hostname.toLowerCase()}`, source: 'custom_domain', domainId: domain.id });
  }
  return entries;
}

export interface RefreshOriginsOptions {
  appsDomains: string[];
  appsScheme: string;
  /** Further addresses the caller knows the application answers on (e.g. a release's URL). */
  addresses?: string[];
}

/**
 * Brings an application's registered origins in line with its addresses now: its address under
 * every publishing domain, its verified custom domains, and `addresses`. Origins of publishing domains no
 * longer configured are removed; origins added by hand (`manual`) are left alone. Called on
 * switch-on (through provisioning), on every deploy (the release step) and safe to call anytime.
 */
export async function refreshTrustedOrigins(
  applications: ApplicationsRepository,
  applicationId: ApplicationId,
  options: RefreshOriginsOptions,
): Promise<string[]> {
  const app = await applications.trustedOrigins.sources(applicationId);
  if (!app) return [];
  const entries = applicationOrigins(app.slug, options.appsDomains, options.appsScheme, app.domains);
  // Its previews' addresses (`{slug}--{name}` under every publishing domain), while they exist.
  for (const preview of app.previews)
    for (const domain of options.appsDomains) entries.push({ origin: `${options.appsScheme}://${preview.slug}.${domain}`.toLowerCase(), source: 'preview' });
  for (const address of options.addresses ?? []) {
    const origin = originOf(address);
    if (origin && !isClaimableHost(new URL(origin).hostname, app.slug, options.appsDomains)) continue;
    if (origin && !entries.some((e) => e.origin === origin)) entries.push({ origin, source: 'publishing_domain' });
  }
  // Origins of a custom domain that is not (or no longer) verified never stay trusted.
  return applications.trustedOrigins.replaceDerived(applicationId, entries);
}

function originOf(address: string): string | null {
  try {
    const url = new URL(address);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin.toLowerCase() : null;
  } catch {
    return null;
  }
}
