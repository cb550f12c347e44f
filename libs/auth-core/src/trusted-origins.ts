/** Channel on which a change of a tenant's sign-in configuration is announced to every replica. */
export const TENANT_CHANGED_CHANNEL = 'slipway:auth:tenant-changed';

export interface OriginEntry {
  origin: string;
  source: 'app' | 'publishing_domain' | 'custom_domain';
  domainId?: string;
}

/** The application's address under every publishing domain (the first is its own), plus its custom domains. */
export function applicationOrigins(slug: string, appsDomains: string[], appsScheme: string, customDomains: { id: string; hostname: string }[]): OriginEntry[] {
  const entries: OriginEntry[] = appsDomains.map((domain, index) => ({
    origin: `${appsScheme}://${slug}.${domain}`.toLowerCase(),
    source: index === 0 ? 'app' : 'publishing_domain',
  }));
  for (const domain of customDomains) {
    entries.push({ origin: `https://${domain.hostname.toLowerCase()}`, source: 'custom_domain', domainId: domain.id });
    if (appsScheme === 'http') entries.push({ origin: `http://${domain.hostname.toLowerCase()}`, source: 'custom_domain', domainId: domain.id });
  }
  return entries;
}
