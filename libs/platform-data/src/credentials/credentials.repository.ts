import { Injectable } from '@nestjs/common';
import { asOwnerId, type ApplicationId, type OwnerId } from '../ids.js';
import { PlatformInfrastructure } from '../infrastructure.js';
import { API_KEYS, CredentialStore, PERSONAL_ACCESS_TOKENS } from './credential-store.js';

// The index exports this file; the lifecycle's types are part of this repository's surface.
export { CredentialStore, type CredentialRecord } from './credential-store.js';

/** A project API key as authentication needs it (the hash to compare, whether it still counts). */
export interface StoredApiKey {
  id: string;
  applicationId: ApplicationId;
  keyHash: string;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

/** A personal access token as authentication needs it. */
export interface StoredPersonalAccessToken {
  id: string;
  ownerId: OwnerId;
  tokenHash: string;
  revokedAt: Date | null;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
}

const API_KEY_BY_PREFIX = `SELECT id::text AS "id", application_id::text AS "applicationId", key_hash AS "keyHash",
       revoked_at AS "revokedAt", last_used_at AS "lastUsedAt"
  FROM api_keys WHERE prefix = $1`;

/**
 * API keys and personal access tokens: one lifecycle (list, create, rename, rotate, revoke, last used).
 * Every query of the platform database on these tables lives here (ARCHITECTURE.md, "Data").
 */
@Injectable()
export class CredentialsRepository {
  /** One application's project API keys (`slw_key_…`). */
  readonly apiKeys: CredentialStore<ApplicationId>;
  /** One owner's personal access tokens (`slw_pat_…`). */
  readonly personalAccessTokens: CredentialStore<OwnerId>;

  constructor(private readonly platform: PlatformInfrastructure) {
    this.apiKeys = new CredentialStore(platform, API_KEYS);
    this.personalAccessTokens = new CredentialStore(platform, PERSONAL_ACCESS_TOKENS);
  }

  /**
   * The key a presented `slw_key_…` names, by its public prefix (any application's: the prefix is
   * what identifies it). A named prepared statement on the pg pool rather than Prisma: this runs
   * on every API request, and Prisma's model API costs ~1 ms of CPU per query, its `$queryRaw`
   * ~0.4 ms, pg alone ~0.1 ms (bench/README.md, deploy-accept).
   */
  async findApiKeyByPrefix(prefix: string): Promise<StoredApiKey | null> {
    const result = await this.platform.pool.query<StoredApiKey>({ name: 'gateway_api_key_by_prefix', text: API_KEY_BY_PREFIX, values: [prefix] });
    return result.rows[0] ?? null;
  }

  /** The token a presented `slw_pat_…` names, by its public prefix. */
  async findPersonalAccessTokenByPrefix(prefix: string): Promise<StoredPersonalAccessToken | null> {
    const token = await this.platform.prisma.personalAccessToken.findUnique({
      where: { prefix },
      select: { id: true, ownerId: true, tokenHash: true, revokedAt: true, expiresAt: true, lastUsedAt: true },
    });
    return token ? { ...token, ownerId: asOwnerId(token.ownerId) } : null;
  }
}
