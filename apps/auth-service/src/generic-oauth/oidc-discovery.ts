import { Inject, Injectable } from '@nestjs/common';
import { createLocalJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { fetchOutbound, type OutboundPolicy } from '@slipway/service-kit';
import { AUTH_CONFIG, type AuthConfig } from '../config.js';

/** What the service uses of an issuer's `/.well-known/openid-configuration`. */
export interface OidcMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  userinfo_endpoint?: string | undefined;
  jwks_uri: string;
  id_token_signing_alg_values_supported: string[];
}

/** Discovery documents and key sets are small; anything larger is refused. */
const MAX_DOCUMENT_BYTES = 64 * 1024;
const FETCH_TIMEOUT_MS = 5_000;
/** How long a discovery document or key set is reused. */
const CACHE_MS = 10 * 60_000;
/** A failed discovery is not retried for this long (a dead issuer does not cost a request per sign-in). */
const FAILURE_CACHE_MS = 30_000;
/** An unknown key id refetches the key set (the issuer rotated), at most this often. */
const JWKS_REFRESH_MS = 60_000;
const MAX_CACHED = 500;
/** Asymmetric algorithms only: `none` and HS* (keyed with the client secret) are never accepted. */
const ALGORITHMS = new Set(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']);

type Cached<T> = { value: T | Error; at: number };

/**
 * OpenID Connect discovery and id_token verification for tenants' issuers. Every request goes
 * through `fetchOutbound` under the SSRF policy (https, no internal address at connect time, no
 * redirect to one, bounded size and time); results are cached per URL, bounded in count and age.
 */
@Injectable()
export class OidcDiscovery {
  readonly policy: OutboundPolicy;
  private readonly documents = new Map<string, Cached<OidcMetadata>>();
  private readonly keySets = new Map<string, Cached<JWTVerifyGetKey>>();

  constructor(@Inject(AUTH_CONFIG) config: AuthConfig) {
    this.policy = { allowPrivate: config.AUTH_OIDC_ALLOW_PRIVATE_ISSUERS, platformHosts: [new URL(config.AUTH_PUBLIC_URL).hostname] };
  }

  async metadata(issuer: string): Promise<OidcMetadata> {
    return this.cached(this.documents, issuer, CACHE_MS, async () => {
      const doc = await this.getJson(`${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`);
      const text = (key: string) => (typeof doc[key] === 'string' ? (doc[key] as string) : undefined);
      const meta = {
        issuer: text('issuer') ?? '',
        authorization_endpoint: text('authorization_endpoint') ?? '',
        token_endpoint: text('token_endpoint') ?? '',
        userinfo_endpoint: text('userinfo_endpoint'),
        jwks_uri: text('jwks_uri') ?? '',
        id_token_signing_alg_values_supported: Array.isArray(doc['id_token_signing_alg_values_supported'])
          ? (doc['id_token_signing_alg_values_supported'] as unknown[]).filter((a): a is string => typeof a === 'string')
          : ['RS256'],
      };
      // OpenID Connect Discovery 1.0 §4.3: the document's issuer is the one asked for.
      if (meta.issuer.replace(/\/+$/, '') !== issuer.replace(/\/+$/, '')) throw new Error(`discovery names issuer ${meta.issuer}, not ${issuer}`);
      if (!meta.authorization_endpoint || !meta.token_endpoint || !meta.jwks_uri)
        throw new Error('discovery lacks authorization_endpoint, token_endpoint or jwks_uri');
      for (const url of [meta.authorization_endpoint, meta.token_endpoint, meta.jwks_uri, meta.userinfo_endpoint]) if (url !== undefined) new URL(url);
      return meta;
    });
  }

  /** Verifies signature (the issuer's JWKS), iss, aud (and azp), exp/nbf and the nonce; returns the claims. */
  async verifyIdToken(meta: OidcMetadata, idToken: string, clientId: string, nonce: string): Promise<JWTPayload> {
    const algorithms = meta.id_token_signing_alg_values_supported.filter((a) => ALGORITHMS.has(a));
    const verify = async (keys: JWTVerifyGetKey) =>
      (await jwtVerify(idToken, keys, { issuer: meta.issuer, audience: clientId, algorithms, clockTolerance: 30, requiredClaims: ['sub', 'exp', 'iat'] }))
        .payload;
    let claims: JWTPayload;
    try {
      claims = await verify(await this.keySet(meta.jwks_uri));
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
      const held = this.keySets.get(meta.jwks_uri);
      if (held && Date.now() - held.at < JWKS_REFRESH_MS) throw error;
      this.keySets.delete(meta.jwks_uri);
      claims = await verify(await this.keySet(meta.jwks_uri));
    }
    if (Array.isArray(claims.aud) && claims.aud.length > 1 && claims['azp'] !== clientId) throw new Error('id_token azp is not this client');
    if (typeof claims['nonce'] !== 'string' || claims['nonce'] !== nonce) throw new Error('id_token nonce does not match');
    return claims;
  }

  /** GET of a tenant-chosen URL with the access token (userinfo). */
  async userInfo(url: string, accessToken: string): Promise<Record<string, unknown>> {
    return this.getJson(url, { authorization: `Bearer ${accessToken}` });
  }

  /** POST of the token request to a tenant-chosen token endpoint (no redirect followed). */
  async tokenRequest(url: string, form: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetchOutbound(url, this.policy, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form).toString(),
      maxBytes: MAX_DOCUMENT_BYTES,
      timeoutMs: FETCH_TIMEOUT_MS * 2,
    });
    return { status: res.status, body: parseObject(res.body) ?? {} };
  }

  private async keySet(jwksUri: string): Promise<JWTVerifyGetKey> {
    return this.cached(this.keySets, jwksUri, CACHE_MS, async () => {
      const jwks = await this.getJson(jwksUri);
      if (!Array.isArray(jwks['keys'])) throw new Error('jwks_uri answered no keys');
      return createLocalJWKSet(jwks as unknown as Parameters<typeof createLocalJWKSet>[0]);
    });
  }

  private async getJson(url: string, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
    const res = await fetchOutbound(url, this.policy, {
      headers: { accept: 'application/json', ...headers },
      maxBytes: MAX_DOCUMENT_BYTES,
      timeoutMs: FETCH_TIMEOUT_MS,
    });
    if (res.status !== 200) throw new Error(`${new URL(url).origin} answered ${res.status}`);
    const body = parseObject(res.body);
    if (!body) throw new Error(`${new URL(url).origin} did not answer a JSON object`);
    return body;
  }

  private async cached<T>(map: Map<string, Cached<T>>, key: string, ttl: number, load: () => Promise<T>): Promise<T> {
    const held = map.get(key);
    if (held && Date.now() - held.at < (held.value instanceof Error ? FAILURE_CACHE_MS : ttl)) {
      if (held.value instanceof Error) throw held.value;
      return held.value;
    }
    let value: T | Error;
    try {
      value = await load();
    } catch (error) {
      value = error as Error;
    }
    map.delete(key);
    if (map.size >= MAX_CACHED) map.delete(map.keys().next().value!);
    map.set(key, { value, at: Date.now() });
    if (value instanceof Error) throw value;
    return value;
  }
}

function parseObject(body: Buffer): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
