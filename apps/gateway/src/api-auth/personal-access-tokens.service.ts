import { Injectable, Logger } from '@nestjs/common';
import { digestsEqual, parseToken } from '@slipway/crypto';
import { CredentialsRepository, asOwnerId, type OwnerId } from '@slipway/platform-data';
import { unauthorized } from './api-key-verifier.service.js';

/** last_used_at is informational: writing it at most once a minute keeps it off the hot path. */
const TOUCH_INTERVAL_MS = 60_000;

/**
 * Checks a presented personal access token (`slw_pat_…`): the owner it belongs to, or
 * `unauthorized`. Used by the sign-in platform calls and by the owners' API.
 */
@Injectable()
export class PersonalAccessTokensService {
  private readonly logger = new Logger('PersonalAccessTokens');

  constructor(private readonly credentials: CredentialsRepository) {}

  async authenticate(presented: string): Promise<OwnerId> {
    const parsed = parseToken('personal_access_token', presented);
    if (!parsed) throw unauthorized('The token is malformed; owner tokens look like slw_pat_…, project API keys like slw_key_….');
    const token = await this.credentials.findPersonalAccessTokenByPrefix(parsed.prefix);
    // Compare digests even for an unknown prefix so both paths cost the same.
    const matches = digestsEqual(parsed.hash, token?.tokenHash ?? '0'.repeat(64)) && token !== null;
    if (!token || !matches) throw unauthorized('The token is not valid.');
    if (token.revokedAt) throw unauthorized('The token has been revoked.');
    const now = new Date();
    if (token.expiresAt && token.expiresAt <= now) throw unauthorized('The token has expired.');
    if (!token.lastUsedAt || now.getTime() - token.lastUsedAt.getTime() > TOUCH_INTERVAL_MS) {
      void this.credentials.personalAccessTokens
        .touchLastUsed([token.id])
        .catch((error: unknown) => this.logger.warn(`could not record use of token ${token.id}: ${(error as Error).message}`));
    }
    return asOwnerId(token.ownerId);
  }
}
