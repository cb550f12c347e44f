import { Inject, Injectable } from '@nestjs/common';
import { KeyObject, sign as signEd25519 } from 'node:crypto';
import type { JWK } from 'jose';
import { JWT_TTL_SECONDS, decryptSigningKey, insertSigningKey, rotateSigningKey } from '@slipway/sign-in-core';
import type { Keyring } from '@slipway/crypto';
import type { AuthResult } from '../common/index.js';
import { KEYRING } from '../platform/index.js';
import { TenantsService, type Tenant } from '../tenants/index.js';
import type { UserRow } from '../users/index.js';
import { TokensRepository } from './tokens.repository.js';

/** The session's active organization and the user's role in it (organization plugin): claims `activeOrganizationId`, `organizationRole`. */
export interface OrganizationClaims {
  id: string;
  role: string;
}

// A decrypted signing key is kept this long; rotation publishes keys 10 minutes ahead, so this never signs with a retired key in practice.
const KEY_CACHE_MS = 60_000;
/** How long after its `iat` a signed token may be handed out again for the same cached session. */
export const JWT_REUSE_MS = 5_000;

/** JWTs for a tenant's users: EdDSA, `kid`, iss = aud = `{auth_url}`, 15 minutes. */
@Injectable()
export class TokensService {
  private readonly keys = new Map<string, { kid: string; key: KeyObject; header: string; until: number; retiresAt: number }>();
  /** Bumped by every local rotation: tokens signed before it are not handed out again. */
  epoch = 0;

  constructor(
    @Inject(KEYRING) private readonly keyring: Keyring,
    private readonly tenants: TenantsService,
    private readonly repository: TokensRepository,
  ) {}

  /**
   * The same compact JWS jose's SignJWT writes (header `{alg, kid}`, claims in the order
   * email, name, emailVerified, sub, iss, aud, iat, exp; Ed25519 is deterministic, so the bytes
   * are identical), signed synchronously with node:crypto: WebCrypto's async sign job cost more
   * than the signature itself on the get-session and token paths.
   */
  async sign(tenant: Tenant, user: UserRow, organization: OrganizationClaims | null = null): Promise<string> {
    return (await this.signReusable(tenant, user, organization)).token;
  }

  /**
   * A token and until when (Date.now()) the session cache may hand it out again instead of
   * signing a new one: at most JWT_REUSE_MS after its `iat`, never past its key's cache or
   * retirement. A reused token's `iat` is that much in the past and it expires that much sooner
   * than a fresh one (never later); its claims are current because any change to the user evicts
   * the cache entry that holds it (a change of the active organization or of the member's role
   * too: the organization routes invalidate the users concerned).
   */
  async signReusable(tenant: Tenant, user: UserRow, organization: OrganizationClaims | null = null): Promise<{ token: string; until: number; epoch: number }> {
    const epoch = this.epoch;
    const entry = await this.signingKey(tenant);
    const now = Date.now();
    const iat = Math.floor(now / 1000);
    const claims: Record<string, unknown> = { email: user.email, name: user.name, emailVerified: user.email_verified };
    if (organization) {
      claims.activeOrganizationId = organization.id;
      claims.organizationRole = organization.role;
    }
    Object.assign(claims, { sub: user.id, iss: tenant.authUrl, aud: tenant.authUrl, iat, exp: iat + JWT_TTL_SECONDS });
    const input = `${entry.header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    const token = `${input}.${signEd25519(null, Buffer.from(input), entry.key).toString('base64url')}`;
    return { token, until: Math.min(iat * 1000 + JWT_REUSE_MS, entry.until, entry.retiresAt), epoch };
  }

  async jwks(tenant: Tenant): Promise<AuthResult> {
    const rows = await this.repository.publishedKeys(this.tenants.db(tenant));
    const keys = rows.map((r) => {
      const { kty, crv, x } = JSON.parse(r.public_key) as JWK;
      return { kty, crv, x, kid: r.id, alg: 'EdDSA', use: 'sig' };
    });
    // New keys are published 10 minutes before use, so caching this for 5 minutes is safe.
    return { body: { keys }, headers: { 'Cache-Control': 'public, max-age=300, stale-while-revalidate=60' } };
  }

  /** Publishes a new key now that signs after `publishLeadSeconds`; the old key stays listed until its tokens expired. */
  async rotate(tenant: Tenant, publishLeadSeconds?: number): Promise<{ kid: string; activatesAt: Date }> {
    const result = await rotateSigningKey(this.tenants.db(tenant), this.keyring, tenant.applicationId, publishLeadSeconds);
    this.keys.delete(tenant.applicationId);
    this.epoch++;
    return result;
  }

  private async signingKey(tenant: Tenant): Promise<{ kid: string; key: KeyObject; header: string; until: number; retiresAt: number }> {
    const cached = this.keys.get(tenant.applicationId);
    const now = Date.now();
    if (cached && cached.until > now && cached.retiresAt > now) return cached;
    const db = this.tenants.db(tenant);
    let row = await this.repository.currentKey(db);
    if (!row) {
      // Every key retired without a successor (or none was made): mint one rather than fail sign-in.
      await insertSigningKey(db, this.keyring, tenant.applicationId);
      row = (await this.repository.currentKey(db))!;
    }
    const key = KeyObject.from(await decryptSigningKey(this.keyring, tenant.applicationId, row));
    const header = Buffer.from(JSON.stringify({ alg: 'EdDSA', kid: row.id })).toString('base64url');
    const entry = { kid: row.id, key, header, until: now + KEY_CACHE_MS, retiresAt: row.retires_at?.getTime() ?? Infinity };
    this.keys.set(tenant.applicationId, entry);
    return entry;
  }
}
