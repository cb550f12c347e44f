import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { ApplicationsRepository, type ApplicationDomains } from '@slipway/platform-data';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';
import { challengeRecord, DomainVerifier } from './domain-verifier.js';
import { DomainsService, failureMessage } from './domains.service.js';

const BATCH = 20;

/**
 * Verified custom domains are looked up again every DOMAIN_RECHECK_INTERVAL_MS (docs/decisions/
 * custom-domain-verification.md). A check that finds the record counts nothing against the domain (and clears the
 * count); one that finds it gone or wrong counts one; DOMAIN_RECHECK_FAILURES of those in a row
 * unverify the claim: its origins go, and the edges, told on the routes channel, drop its route
 * and its certificate. A failed lookup (timeout, SERVFAIL) is recorded but counts nothing: an
 * outage of the platform's resolver must not take everyone's domains away.
 */
@Injectable()
export class DomainRecheckService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('domains');
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private readonly domains: ApplicationDomains;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    applications: ApplicationsRepository,
    private readonly verifier: DomainVerifier,
    private readonly claims: DomainsService,
  ) {
    this.domains = applications.domains;
  }

  onModuleInit(): void {
    // Ticks often enough that a due claim waits at most a tenth of the interval (never more than a minute).
    const tick = Math.max(200, Math.min(60_000, Math.floor(this.config.DOMAIN_RECHECK_INTERVAL_MS / 10)));
    this.timer = setInterval(() => {
      if (!this.running)
        this.running = this.recheckDue()
          .catch((error: Error) => this.logger.error(`domain re-check failed: ${error.message}`))
          .finally(() => (this.running = undefined));
    }, tick);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One pass over the claims that are due (public for the tests' and operators' sake). */
  async recheckDue(): Promise<void> {
    const due = await this.domains.claimDueForRecheck(this.config.DOMAIN_RECHECK_INTERVAL_MS, BATCH);
    for (const claim of due) {
      const record = challengeRecord(claim.hostname, claim.verificationToken);
      const lookup = await this.verifier.txt(record.name);
      if (lookup.ok && lookup.values.includes(record.value)) {
        await this.domains.recheckPassed(claim.id);
        continue;
      }
      const reason = lookup.ok ? 'wrong_value' : lookup.reason;
      const found = lookup.ok ? lookup.values : [];
      const counts = reason !== 'lookup_failed';
      const failures = claim.checkFailures + (counts ? 1 : 0);
      const lapse = counts && failures >= this.config.DOMAIN_RECHECK_FAILURES;
      const limit = this.config.DOMAIN_RECHECK_FAILURES;
      const detail = failureMessage(reason, record, found, lookup.ok ? '' : lookup.detail);
      const message = lapse
        ? `Verification lapsed: ${limit} re-checks in a row did not find the record, so ${claim.hostname} is no longer served. ${detail}`
        : counts
          ? `Re-check ${failures} of ${limit} failed (the domain lapses after ${limit} in a row): ${detail}`
          : `Re-check: ${detail}`;
      const changed = await this.domains.recheckFailed(claim.id, message, counts, lapse);
      if (!changed) continue;
      this.logger.warn(`${claim.hostname}: ${lapse ? 'verification lapsed' : `re-check failed (${reason}, ${failures}/${limit})`}`);
      if (lapse) await this.claims.announce(claim.applicationId);
    }
  }
}
