import { Inject, Injectable } from '@nestjs/common';
import { SignJWT, type CryptoKey, type JWK } from 'jose';
import { JWT_TTL_SECONDS, decryptSigningKey, insertSigningKey, rotateSigningKey } from '@slipway/auth-core';
import type { Keyring } from '@slipway/crypto';
import { KEYRING } from '../common/platform.providers.js';
import type { AuthResult } from '../common/auth-result.js';
import { TenantsService } from '../tenants/tenants.service.js';
import type { Tenant } from '../tenants/tenant.js';
import type { UserRow } from '../users/users.repository.js';
import { TokensRepository } from './tokens.repository.js';

// A decrypted signing key is kept this long; rotation publishes keys 10 minutes ahead, so this never signs with a retired key in practice.
const KEY_CACHE_MS = 60_000;

/** JWTs for a tenant's users: EdDSA, `kid`, iss = aud = `{auth_url}`, 15 minutes. */
@Injectable()
export class TokensService {
  private readonly keys = new Map<string, { kid: string; key: CryptoKey; until: number; retiresAt: number }>();

  constructor(
    @Inject(KEYRING) private readonly keyring: Keyring,
    private readonly tenants: TenantsService,
    private readonly repository: TokensRepository,
  ) {}

  async sign(tenant: Tenant, user: UserRow): Promise<string> {
    const { kid, key } = await this.signingKey(tenant);
    return new SignJWT({ email: user.email, name: user.name, emailVerified: user.email_verified })
      .setProtectedHeader({ alg: 'EdDSA', kid })
      .setSubject(user.id)
      .setIssuer(tenant.authUrl)
      .setAudience(tenant.authUrl)
      .setIssuedAt()
      .setExpirationTime(`${JWT_TTL_SECONDS}s`)
      .sign(key);
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
    const result = await rotateSigningKey(this.tenants.db(tenant) as never, this.keyring, tenant.applicationId, publishLeadSeconds);
    this.keys.delete(tenant.applicationId);
    return result;
  }

  private async signingKey(tenant: Tenant): Promise<{ kid: string; key: CryptoKey }> {
    const cached = this.keys.get(tenant.applicationId);
    const now = Date.now();
    if (cached && cached.until > now && cached.retiresAt > now) return cached;
    const db = this.tenants.db(tenant);
    let row = await this.repository.currentKey(db);
    if (!row) {
      // Every key retired without a successor (or none was made): mint one rather than fail sign-in.
      await insertSigningKey(db as never, this.keyring, tenant.applicationId);
      row = (await this.repository.currentKey(db))!;
    }
    const entry = { kid: row.id, key: await decryptSigningKey(this.keyring, tenant.applicationId, row), until: now + KEY_CACHE_MS, retiresAt: row.retires_at?.getTime() ?? Infinity };
    this.keys.set(tenant.applicationId, entry);
    return entry;
  }
}
