import { Injectable, Logger } from '@nestjs/common';
import { digestsEqual, parseToken } from '@slipway/crypto';
import { ApiException } from '@slipway/server';
import type { ApiPrincipal } from './api-principal.js';
import { ApiKeysRepository } from './api-keys.repository.js';

/** last_used_at is informational: writing it at most once a minute keeps it off the hot path. */
const TOUCH_INTERVAL_MS = 60_000;

@Injectable()
export class ApiKeysService {
  private readonly logger = new Logger('ApiKeys');

  constructor(private readonly keys: ApiKeysRepository) {}

  /** The application a presented project API key belongs to; `unauthorized` otherwise. */
  async authenticate(presented: string): Promise<ApiPrincipal> {
    const parsed = parseToken('api_key', presented);
    if (!parsed) throw unauthorized('The API key is malformed; project API keys look like slw_key_….');
    const key = await this.keys.findByPrefix(parsed.prefix);
    // Compare digests even for an unknown prefix so both paths cost the same.
    const matches = digestsEqual(parsed.hash, key?.keyHash ?? '0'.repeat(64)) && key !== null;
    if (!key || !matches) throw unauthorized('The API key is not valid.');
    if (key.revokedAt) throw unauthorized('The API key has been revoked.');
    const now = new Date();
    if (!key.lastUsedAt || now.getTime() - key.lastUsedAt.getTime() > TOUCH_INTERVAL_MS) {
      void this.keys.touch(key.id, now).catch((error: unknown) => this.logger.warn(`could not record use of key ${key.id}: ${(error as Error).message}`));
    }
    return { applicationId: key.applicationId, apiKeyId: key.id };
  }
}

export function unauthorized(message: string): ApiException {
  return new ApiException('unauthorized', message, {}, { 'WWW-Authenticate': 'Bearer realm="slipway"' });
}
