import { randomBytes } from 'node:crypto';
import {
  EnvelopeError,
  decryptEnvelopeToString,
  digestsEqual,
  encryptEnvelope,
  envelopeBinding,
  issueToken,
  keyringFromMasterKey,
  parseToken,
  rewrapEnvelope,
  type Keyring,
} from './index.js';

const keyring = keyringFromMasterKey(randomBytes(32).toString('base64'));

describe('envelope encryption', () => {
  const aad = envelopeBinding.secret('app-a', 'STRIPE_KEY');

  it('round-trips and never contains the plaintext', () => {
    const sealed = encryptEnvelope(keyring, 'sk_live_canary_123', aad);
    expect(sealed.includes(Buffer.from('sk_live_canary_123'))).toBe(false);
    expect(decryptEnvelopeToString(keyring, sealed, aad)).toBe('sk_live_canary_123');
  });

  it('fails when moved to another application or name', () => {
    const sealed = encryptEnvelope(keyring, 'v', aad);
    expect(() => decryptEnvelopeToString(keyring, sealed, envelopeBinding.secret('app-b', 'STRIPE_KEY'))).toThrow(EnvelopeError);
    expect(() => decryptEnvelopeToString(keyring, sealed, envelopeBinding.secret('app-a', 'OTHER'))).toThrow(EnvelopeError);
  });

  it('fails on a single flipped bit anywhere', () => {
    const sealed = encryptEnvelope(keyring, 'value', aad);
    for (const index of [5, 20, sealed.length - 20, sealed.length - 1]) {
      const tampered = Buffer.from(sealed);
      tampered[index]! ^= 0x01;
      expect(() => decryptEnvelopeToString(keyring, tampered, aad)).toThrow(EnvelopeError);
    }
  });

  it('rotates the key-encryption key while old envelopes still decrypt', () => {
    const old = encryptEnvelope(keyring, 'value', aad);
    const rotated: Keyring = {
      currentKid: 'k2',
      keys: new Map([...keyring.keys, ['k2', randomBytes(32)]]),
    };
    expect(decryptEnvelopeToString(rotated, old, aad)).toBe('value');
    const rewrapped = rewrapEnvelope(rotated, old, aad);
    const onlyNew: Keyring = { currentKid: 'k2', keys: new Map([['k2', rotated.keys.get('k2')!]]) };
    expect(decryptEnvelopeToString(onlyNew, rewrapped, aad)).toBe('value');
    expect(() => decryptEnvelopeToString(onlyNew, old, aad)).toThrow(/no key for kid k1/);
  });
});

describe('tokens', () => {
  it('issues recognisable keys with at least 128 random bits and stores only prefix + hash', () => {
    const issued = issueToken('api_key');
    expect(issued.token).toMatch(/^slw_key_[0-9A-Za-z]{10}_[0-9A-Za-z]{43}$/);
    expect(issued.token.startsWith(issued.prefix)).toBe(true);
    expect(issued.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(issued.hash).not.toContain(issued.token.slice(-43));
    expect(issueToken('api_key').token).not.toBe(issued.token);
  });

  it('parses only well-formed tokens of the right kind', () => {
    const issued = issueToken('personal_access_token');
    expect(parseToken('personal_access_token', issued.token)).toEqual({ prefix: issued.prefix, hash: issued.hash });
    expect(parseToken('api_key', issued.token)).toBeNull();
    expect(parseToken('personal_access_token', `${issued.token}x`)).toBeNull();
    expect(parseToken('personal_access_token', '')).toBeNull();
  });

  it('compares digests in constant time and rejects malformed ones', () => {
    const { hash } = issueToken('api_key');
    expect(digestsEqual(hash, hash)).toBe(true);
    expect(digestsEqual(hash, issueToken('api_key').hash)).toBe(false);
    expect(digestsEqual(hash, 'abc')).toBe(false);
  });
});
