import { decryptEnvelope, encryptEnvelope, envelopeBinding, randomAlphanumeric, type Keyring } from '@slipway/crypto';
import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';

/** Lifetime of a JWT from `/token` and `set-auth-jwt`. */
export const JWT_TTL_SECONDS = 15 * 60;
/** `createRemoteJWKSet` caches a JWKS for 10 minutes: publish new keys that long before use. */
export const JWKS_CACHE_SECONDS = 10 * 60;

/** Anything that runs a parameterised query: a pg Pool, PoolClient or Client. */
export interface Queryable {
  query<R extends Record<string, unknown> = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
}

export interface SigningKeyRow extends Record<string, unknown> {
  id: string;
  public_key: string;
  private_key: Buffer;
  activates_at: Date;
  retires_at: Date | null;
}

/** Makes a new Ed25519 key pair; the private JWK is returned only as an envelope bound to app + kid. */
export async function generateSigningKey(keyring: Keyring, applicationId: string): Promise<{ kid: string; publicJwk: JWK; privateKey: Buffer }> {
  const kid = randomAlphanumeric(32);
  const { publicKey, privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: 'EdDSA', use: 'sig' };
  const privateJwk = await exportJWK(privateKey);
  return { kid, publicJwk, privateKey: encryptEnvelope(keyring, JSON.stringify(privateJwk), envelopeBinding.signingKey(applicationId, kid)) };
}

export async function insertSigningKey(db: Queryable, keyring: Keyring, applicationId: string, activatesAt: Date | null = null): Promise<string> {
  const key = await generateSigningKey(keyring, applicationId);
  await db.query(`INSERT INTO service_auth.jwks (id, public_key, private_key, activates_at) VALUES ($1, $2, $3, COALESCE($4, now()))`, [
    key.kid,
    JSON.stringify(key.publicJwk),
    key.privateKey,
    activatesAt,
  ]);
  return key.kid;
}

export async function decryptSigningKey(keyring: Keyring, applicationId: string, row: SigningKeyRow): Promise<CryptoKey> {
  const jwk = JSON.parse(decryptEnvelope(keyring, row.private_key, envelopeBinding.signingKey(applicationId, row.id)).toString('utf8')) as JWK;
  return (await importJWK({ ...jwk, alg: 'EdDSA' }, 'EdDSA')) as CryptoKey;
}

/**
 * Rotation with overlap: the new key is published now and signs from `now + publishLeadSeconds`
 * (so caches of the JWKS have it before the first token); the keys signing until then retire at
 * that moment and stay published until their last token expired plus the cache time.
 */
export async function rotateSigningKey(
  db: Queryable,
  keyring: Keyring,
  applicationId: string,
  publishLeadSeconds = JWKS_CACHE_SECONDS,
): Promise<{ kid: string; activatesAt: Date }> {
  const activatesAt = new Date(Date.now() + publishLeadSeconds * 1000);
  await db.query(`UPDATE service_auth.jwks SET retires_at = $1 WHERE retires_at IS NULL OR retires_at > $1`, [activatesAt]);
  const kid = await insertSigningKey(db, keyring, applicationId, activatesAt);
  return { kid, activatesAt };
}

/** The key that signs now: the newest active one that has not retired. */
export const CURRENT_SIGNING_KEY_SQL = `SELECT id, public_key, private_key, activates_at, retires_at FROM service_auth.jwks
  WHERE activates_at <= now() AND (retires_at IS NULL OR retires_at > now()) ORDER BY activates_at DESC LIMIT 1`;

/** Published keys: not yet active, active, or retired less than a token lifetime plus cache time ago. */
export const PUBLISHED_KEYS_SQL = `SELECT id, public_key FROM service_auth.jwks
  WHERE retires_at IS NULL OR retires_at > now() - make_interval(secs => ${JWT_TTL_SECONDS + JWKS_CACHE_SECONDS}) ORDER BY activates_at`;
