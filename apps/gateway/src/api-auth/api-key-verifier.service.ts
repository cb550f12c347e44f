import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { digestsEqual, parseToken } from '@slipway/crypto';
import { CredentialsRepository } from '@slipway/platform-data';
import { ApiException } from '@slipway/service-kit';
import type { ApiPrincipal } from './api-principal.js';

/** last_used_at is informational: writing it at most once a minute keeps it off the hot path. */
const TOUCH_INTERVAL_MS = 60_000;
/** Uses noted within this window are written together, in one UPDATE. */
const TOUCH_FLUSH_MS = 1_000;

@Injectable()
export class ApiKeysService implements OnModuleDestroy {
  private readonly logger = new Logger('ApiKeys');
  /** Keys used since the last flush (ids); written by `flushTouches`, at most once a second. */
  private pendingTouches = new Set<string>();
  private flushTimer: NodeJS.Timeout | null = null;

  constructor(private readonly credentials: CredentialsRepository) {}

  /** The application a presented project API key belongs to; `unauthorized` otherwise. */
  async authenticate(presented: string): Promise<ApiPrincipal> {
    const parsed = parseToken('api_key', presented);
    if (!parsed) throw unauthorized('The API key is malformed; project API keys look like slw_key_….');
    const key = await this.credentials.findApiKeyByPrefix(parsed.prefix);
    // Compare digests even for an unknown prefix so both paths cost the same.
    const matches = digestsEqual(parsed.hash, key?.keyHash ?? '0'.repeat(64)) && key !== null;
    if (!key || !matches) throw unauthorized('The API key is not valid.');
    if (key.revokedAt) throw unauthorized('The API key has been revoked.');
    if (!key.lastUsedAt || Date.now() - key.lastUsedAt.getTime() > TOUCH_INTERVAL_MS) this.noteUse(key.id);
    return { applicationId: key.applicationId, apiKeyId: key.id };
  }

  async onModuleDestroy(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    await this.flushTouches();
  }

  /**
   * `last_used_at` is written off the request path, batched: one UPDATE per second for all keys
   * used in it (a busy gateway serving many keys would otherwise add a round trip per request).
   * It may lag the real use by about a second; it is informational.
   */
  private noteUse(id: string): void {
    this.pendingTouches.add(id);
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      void this.flushTouches();
    }, TOUCH_FLUSH_MS);
    this.flushTimer.unref();
  }

  private async flushTouches(): Promise<void> {
    if (this.pendingTouches.size === 0) return;
    const ids = [...this.pendingTouches];
    this.pendingTouches = new Set();
    await this.credentials.apiKeys
      .touchLastUsed(ids)
      .catch((error: unknown) => this.logger.warn(`could not record use of ${ids.length} API key(s): ${(error as Error).message}`));
  }
}

export function unauthorized(message: string): ApiException {
  return new ApiException('unauthorized', message, {}, { 'WWW-Authenticate': 'Bearer realm="slipway"' });
}
