import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` characters from [0-9A-Za-z], uniformly (rejection sampling, no modulo bias). */
export function randomAlphanumeric(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

export function sha256Hex(value: string | Buffer): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Constant-time comparison of two hex SHA-256 digests (fixed length, so no length leak). */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === 32 && right.length === 32 && timingSafeEqual(left, right);
}

export type TokenKind = 'api_key' | 'personal_access_token';

const PREFIX: Record<TokenKind, string> = { api_key: 'slw_key_', personal_access_token: 'slw_pat_' };
/** Characters after the kind prefix that are kept (in clear) to find the row and show the key. */
const LOOKUP_LENGTH = 10;
/** 43 base62 characters ≈ 256 bits; the lookup part is not counted as secret. */
const SECRET_LENGTH = 43;

export interface IssuedToken {
  /** The full token: shown to its owner exactly once, never stored. */
  token: string;
  /** Stored in clear, unique: `slw_key_AbCdEf1234`. */
  prefix: string;
  /** Stored: SHA-256 of the full token, hex. */
  hash: string;
}

/** Issues a recognisable, high-entropy token: `slw_key_<10 lookup>_<43 secret>`. */
export function issueToken(kind: TokenKind): IssuedToken {
  const prefix = PREFIX[kind] + randomAlphanumeric(LOOKUP_LENGTH);
  const token = `${prefix}_${randomAlphanumeric(SECRET_LENGTH)}`;
  return { token, prefix, hash: sha256Hex(token) };
}

/** Splits a presented token into its stored prefix and hash, or null when it is not well formed. */
export function parseToken(kind: TokenKind, presented: string): { prefix: string; hash: string } | null {
  const pattern = new RegExp(`^(${PREFIX[kind]}[0-9A-Za-z]{${LOOKUP_LENGTH}})_[0-9A-Za-z]{${SECRET_LENGTH}}$`);
  const match = pattern.exec(presented);
  return match ? { prefix: match[1]!, hash: sha256Hex(presented) } : null;
}
