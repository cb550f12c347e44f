import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ApplicationsRepository, DomainGoneError, DomainTakenError, type ApplicationDomains, type ApplicationId } from '@slipway/platform-data';
import { ApiException } from '@slipway/service-kit';
import { isUuid, parseBody, RoutesPublisher } from '../common/index.js';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';
import { TenantChangedPublisher } from '../sign-in-services/index.js';
import { AddDomainBody, normaliseHostname } from './dto/add-domain.dto.js';
import { challengeRecord, DomainVerifier, shownValues } from './domain-verifier.js';
import { domainView } from './domain-view.js';

/**
 * Custom domains need proof of control (docs/decisions/custom-domain-verification.md). Adding one makes a pending
 * claim with its own random token; `verify` looks up TXT `_slipway-challenge.<name>` and, when it
 * holds `slipway-verify=<token>`, the claim becomes the verified holder: the edges route it and
 * the sign-in service trusts it. The first claim to verify wins; a later one takes the name over
 * only when the holder's own value is no longer published (whoever controls the DNS decides).
 */
@Injectable()
export class DomainsService {
  private readonly domains: ApplicationDomains;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    applications: ApplicationsRepository,
    private readonly verifier: DomainVerifier,
    private readonly tenantChanged: TenantChangedPublisher,
    private readonly routes: RoutesPublisher,
  ) {
    this.domains = applications.domains;
  }

  async list(applicationId: ApplicationId) {
    return { domains: (await this.domains.list(applicationId)).map(domainView) };
  }

  async add(applicationId: ApplicationId, body: unknown) {
    const { hostname } = parseBody(AddDomainBody, body, 'Send {"hostname"}.');
    if (this.isPlatformHost(hostname)) {
      throw new ApiException('bad_request', `${hostname} is under the platform's own publishing domain; attach a domain you own.`);
    }
    try {
      // Nothing routes or is trusted until the claim is verified: no one to tell yet.
      return domainView(await this.domains.add(applicationId, hostname, randomBytes(32).toString('hex')));
    } catch (error) {
      if (error instanceof DomainTakenError) throw new ApiException('domain_taken', `This application already claims ${hostname}.`);
      throw error;
    }
  }

  async verify(applicationId: ApplicationId, id: string) {
    const claim = isUuid(id) ? await this.domains.find(applicationId, id) : null;
    if (!claim) throw new ApiException('not_found', 'No such domain on this application.');
    const record = challengeRecord(claim.hostname, claim.verificationToken);
    const lookup = await this.verifier.txt(record.name);
    const found = lookup.ok ? lookup.values : [];
    if (!lookup.ok || !found.includes(record.value)) {
      const reason = !lookup.ok && lookup.reason === 'lookup_failed' ? 'lookup_failed' : lookup.ok ? 'wrong_value' : 'no_record';
      const message = failureMessage(reason, record, found, lookup.ok ? '' : lookup.detail);
      // A definite answer without the value ends a verification; a failed lookup changes nothing.
      const unverify = reason !== 'lookup_failed' && claim.verifiedAt !== null;
      await this.domains.markFailed(claim.id, message, unverify);
      if (unverify) await this.announce(applicationId);
      throw new ApiException('domain_unverified', message, { reason, record, found: shownValues(found) });
    }
    const holder = await this.domains.verifiedElsewhere(applicationId, claim.hostname);
    if (holder && found.includes(challengeRecord(claim.hostname, holder.verificationToken).value)) {
      throw new ApiException(
        'domain_taken',
        `${claim.hostname} is verified by another application whose value is still published at ${record.name}. Whoever controls the domain's DNS must remove that value first.`,
      );
    }
    try {
      const displace = holder
        ? { id: holder.id, reason: `Another application verified ${claim.hostname}: ${record.name} no longer held this claim's value.` }
        : undefined;
      const verified = await this.domains.markVerified(claim, this.originsFor(claim.hostname), displace);
      await this.announce(applicationId, holder?.applicationId);
      return domainView(verified);
    } catch (error) {
      if (error instanceof DomainTakenError)
        throw new ApiException('domain_taken', `${claim.hostname} was verified by another application at the same moment.`);
      if (error instanceof DomainGoneError) throw new ApiException('not_found', 'No such domain on this application.');
      throw error;
    }
  }

  async remove(applicationId: ApplicationId, id: string) {
    if (!isUuid(id) || !(await this.domains.remove(applicationId, id))) throw new ApiException('not_found', 'No such domain on this application.');
    await this.announce(applicationId);
    return { id, removed: true };
  }

  /** The sign-in service caches trusted origins and the edges route by host: tell both (also after a re-check lapses a claim). */
  async announce(...applicationIds: (string | undefined)[]): Promise<void> {
    const ids = [...new Set(applicationIds.filter((a): a is string => Boolean(a)))];
    await Promise.all(ids.flatMap((a) => [this.tenantChanged.publish(a), this.routes.routesChanged(a)]));
  }

  /**
   * A publishing domain or a name under one, the platform's own addresses, or a name under
   * `localhost` (RFC 6761: the machine itself, and another application's address in development).
   */
  private isPlatformHost(hostname: string): boolean {
    if (hostname === 'localhost' || hostname.endsWith('.localhost')) return true;
    const publishing = this.config.APPS_DOMAIN.map((d) => normaliseHostname(d.replace(/:\d+$/, '')) || d.replace(/:\d+$/, ''));
    const own = [this.config.PUBLIC_URL, this.config.AUTH_PUBLIC_URL].map((u) => new URL(u).hostname.toLowerCase());
    return publishing.some((d) => hostname === d || hostname.endsWith(`.${d}`)) || own.includes(hostname);
  }

  /** Custom domains are served over https; a platform publishing over plain http (local) trusts both. */
  private originsFor(hostname: string): string[] {
    return this.config.APPS_SCHEME === 'http' ? [`https://${hostname}`, `http://${hostname}`] : [`https://${hostname}`];
  }
}

export function failureMessage(
  reason: 'no_record' | 'wrong_value' | 'lookup_failed',
  record: ReturnType<typeof challengeRecord>,
  found: string[],
  detail: string,
): string {
  const expected = `Add a TXT record named ${record.name} with the value ${record.value}, then verify again (new DNS records can take a few minutes to appear).`;
  if (reason === 'lookup_failed') return `The DNS lookup of ${record.name} failed (${detail}); nothing was changed. Try again shortly.`;
  if (reason === 'no_record') return `No TXT record at ${record.name} (${detail}). ${expected}`;
  const shown = found
    .slice(0, 3)
    .map((v) => JSON.stringify(v.length > 80 ? `${v.slice(0, 80)}…` : v))
    .join(', ');
  return `The TXT record at ${record.name} does not hold this claim's value (found ${shown}). ${expected}`;
}
