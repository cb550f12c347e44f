import { domainToUnicode } from 'node:url';
import type { DomainView, ServerView } from '@slipway/contract';
import { challengeRecord } from './domain-verifier.js';
import type { DomainRow } from '@slipway/platform-data';

/**
 * A claim as the dashboard shows it: its state, the exact record to publish and, once verified,
 * the origins it made trusted. The token is shown only to the claiming application's owner.
 */
export function domainView(domain: DomainRow): ServerView<DomainView> {
  return {
    id: domain.id,
    hostname: domain.hostname,
    displayName: domainToUnicode(domain.hostname),
    status: domain.verifiedAt ? ('verified' as const) : ('pending' as const),
    verifiedAt: domain.verifiedAt,
    checkedAt: domain.checkedAt,
    checkError: domain.checkError,
    /** Periodic re-checks in a row that found the record gone or wrong (the domain lapses at DOMAIN_RECHECK_FAILURES). */
    failedChecks: domain.checkFailures,
    record: challengeRecord(domain.hostname, domain.verificationToken),
    createdAt: domain.createdAt,
    trustedOrigins: domain.origins.map((o) => o.origin),
  };
}
