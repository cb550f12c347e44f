import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Envelope encryption for values at rest (secrets, cookie secrets, signing keys, database
 * passwords). Each value gets its own data key (DEK); the DEK is wrapped by a key-encryption key
 * (KEK) from config. Both layers are AES-256-GCM with a random 96-bit nonce, and both bind the
 * caller's associated data (e.g. `secret:<appId>:<NAME>`), so a ciphertext moved to another row
 * fails to decrypt.
 *
 * Layout (version 1):
 *   [1 version][1 kid length][kid][12 wrap nonce][32 wrapped DEK][16 wrap tag][12 nonce][ciphertext][16 tag]
 */
const VERSION = 1;
const NONCE = 12;
const TAG = 16;
const KEY = 32;

export interface Keyring {
  /** Key id used for new envelopes. */
  currentKid: string;
  /** Every KEK that may still be needed to decrypt, by key id. 32 bytes each. */
  keys: ReadonlyMap<string, Buffer>;
}

export class EnvelopeError extends Error {
  override readonly name = 'EnvelopeError';
}

/** A keyring with one KEK from a base64 master key (`SLIPWAY_MASTER_KEY`). */
export function keyringFromMasterKey(masterKeyBase64: string, kid = 'k1'): Keyring {
  const key = Buffer.from(masterKeyBase64, 'base64');
  if (key.length !== KEY) throw new EnvelopeError('master key must be 32 bytes');
  return { currentKid: kid, keys: new Map([[kid, key]]) };
}

function seal(key: Buffer, plaintext: Buffer, aad: Buffer): Buffer {
  const nonce = randomBytes(NONCE);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(aad);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([nonce, body, cipher.getAuthTag()]);
}

function open(key: Buffer, sealed: Buffer, aad: Buffer): Buffer {
  if (sealed.length < NONCE + TAG) throw new EnvelopeError('envelope is truncated');
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, NONCE));
  decipher.setAAD(aad);
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(NONCE, sealed.length - TAG)), decipher.final()]);
  } catch {
    throw new EnvelopeError('envelope does not authenticate (wrong key, wrong binding, or tampered)');
  }
}

export function encryptEnvelope(keyring: Keyring, plaintext: string | Buffer, associatedData: string): Buffer {
  const kek = keyring.keys.get(keyring.currentKid);
  if (!kek) throw new EnvelopeError(`no key for kid ${keyring.currentKid}`);
  const kid = Buffer.from(keyring.currentKid, 'utf8');
  const aad = Buffer.from(associatedData, 'utf8');
  const dek = randomBytes(KEY);
  const wrapped = seal(kek, dek, Buffer.concat([Buffer.from('dek:'), aad]));
  const body = seal(dek, Buffer.isBuffer(plaintext) ? plaintext : Buffer.from(plaintext, 'utf8'), aad);
  dek.fill(0);
  return Buffer.concat([Buffer.from([VERSION, kid.length]), kid, wrapped, body]);
}

export function decryptEnvelope(keyring: Keyring, envelope: Buffer | Uint8Array, associatedData: string): Buffer {
  const buf = Buffer.from(envelope);
  if (buf.length < 2 || buf[0] !== VERSION) throw new EnvelopeError('unknown envelope version');
  const kidLength = buf[1]!;
  const kid = buf.subarray(2, 2 + kidLength).toString('utf8');
  const kek = keyring.keys.get(kid);
  if (!kek) throw new EnvelopeError(`no key for kid ${kid}`);
  const aad = Buffer.from(associatedData, 'utf8');
  const wrappedEnd = 2 + kidLength + NONCE + KEY + TAG;
  const dek = open(kek, buf.subarray(2 + kidLength, wrappedEnd), Buffer.concat([Buffer.from('dek:'), aad]));
  try {
    return open(dek, buf.subarray(wrappedEnd), aad);
  } finally {
    dek.fill(0);
  }
}

export function decryptEnvelopeToString(keyring: Keyring, envelope: Buffer | Uint8Array, associatedData: string): string {
  return decryptEnvelope(keyring, envelope, associatedData).toString('utf8');
}

/** Re-wraps an envelope under the keyring's current KEK (KEK rotation); the DEK-sealed body is kept. */
export function rewrapEnvelope(keyring: Keyring, envelope: Buffer | Uint8Array, associatedData: string): Buffer {
  return encryptEnvelope(keyring, decryptEnvelope(keyring, envelope, associatedData), associatedData);
}

/** Associated data conventions, in one place so writers and readers cannot disagree. */
export const envelopeBinding = {
  /** `scope` `all` (or none) keeps the binding secrets always had; an environment's own value is bound to it too. */
  secret: (applicationId: string, name: string, scope?: 'all' | 'production' | 'preview') =>
    scope && scope !== 'all' ? `secret:${applicationId}:${name}:${scope}` : `secret:${applicationId}:${name}`,
  cookieSecret: (applicationId: string) => `cookie-secret:${applicationId}`,
  databasePassword: (applicationId: string) => `database-password:${applicationId}`,
  signingKey: (applicationId: string, kid: string) => `signing-key:${applicationId}:${kid}`,
  /** An owner's OAuth app client secret for a social sign-in provider (in sign_in_services.settings). */
  oauthClientSecret: (applicationId: string, provider: string) => `oauth-client-secret:${applicationId}:${provider}`,
  /** An end user's TOTP secret (sign-in service, `service_auth.two_factors.secret`). */
  twoFactorSecret: (applicationId: string, userId: string) => `two-factor-secret:${applicationId}:${userId}`,
} as const;
