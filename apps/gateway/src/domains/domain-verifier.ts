import { Resolver } from 'node:dns/promises';
import { Inject, Injectable } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';

/** The record an owner publishes to prove control of `hostname` for one claim. */
export function challengeRecord(hostname: string, token: string) {
  return { name: `_slipway-challenge.${hostname}`, type: 'TXT' as const, value: `slipway-verify=${token}` };
}

/** What an error body shows of the values found: at most 20, each cut to 255 characters. */
export function shownValues(values: string[]): string[] {
  return values.slice(0, 20).map((v) => v.slice(0, 255));
}

export type TxtLookup = { ok: true; values: string[] } | { ok: false; reason: 'no_record' | 'lookup_failed'; detail: string };

/**
 * Reads TXT records through the servers of SLIPWAY_DNS_SERVERS (the system resolver when unset).
 * A lookup is bounded: 3 s per try, 2 tries (the answer itself is bounded by DNS message size).
 * A value split into several strings is joined, as RFC 7208 does. Every value is kept for the
 * comparison; what is shown back to the owner is cut (`shownValues`).
 */
@Injectable()
export class DomainVerifier {
  private readonly resolver = new Resolver({ timeout: 3000, tries: 2 });

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    if (config.SLIPWAY_DNS_SERVERS.length) this.resolver.setServers(config.SLIPWAY_DNS_SERVERS);
  }

  async txt(name: string): Promise<TxtLookup> {
    try {
      const records = await this.resolver.resolveTxt(name);
      return { ok: true, values: records.map((chunks) => chunks.join('')) };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      if (code === 'ENODATA' || code === 'ENOTFOUND')
        return { ok: false, reason: 'no_record', detail: code === 'ENOTFOUND' ? 'no such name' : 'no TXT record' };
      return { ok: false, reason: 'lookup_failed', detail: code };
    }
  }
}
