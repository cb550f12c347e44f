/**
 * A software WebAuthn authenticator for the service's specs (the browser and its authenticator,
 * which Node lacks): it makes real P-256 credentials and signs real assertions, "none"
 * attestation, so SimpleWebAuthn in the service verifies them exactly as it verifies a device's.
 * The through-the-platform test uses Chromium's own virtual authenticator instead.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

interface Credential {
  id: string;
  privateKey: KeyObject;
  rpID: string;
  userHandle: string;
  counter: number;
}

const b64url = (bytes: Uint8Array | Buffer) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};

export interface CeremonyOverrides {
  /** The page the browser reports in clientDataJSON (default: the authenticator's origin). */
  origin?: string;
  /** The RP ID the authenticator signs for (default: the options' one, else the origin's host). */
  rpID?: string;
  /** Which credential answers (default: the first allowed, else the last made). */
  credentialId?: string;
  /** The signature counter to report (default: one more than the last). */
  counter?: number;
}

export class SoftAuthenticator {
  readonly credentials: Credential[] = [];
  constructor(
    readonly origin: string,
    /** false: an authenticator without a counter (always 0), as many platform passkeys are. */
    private readonly counts = true,
  ) {}

  register(options: { challenge: string; rp: { id?: string }; user: { id: string } }, overrides: CeremonyOverrides = {}) {
    const origin = overrides.origin ?? this.origin;
    const rpID = overrides.rpID ?? options.rp.id ?? new URL(origin).hostname;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const cose = new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(jwk.x!, 'base64url')],
      [-3, Buffer.from(jwk.y!, 'base64url')],
    ]);
    const rawId = randomBytes(32);
    const credential: Credential = { id: b64url(rawId), privateKey, rpID, userHandle: options.user.id, counter: 0 };
    const credIdLength = Buffer.alloc(2);
    credIdLength.writeUInt16BE(rawId.length);
    // flags: user present (0x01), user verified (0x04), attested credential data (0x40)
    const authData = Buffer.concat([sha256(rpID), Buffer.from([0x45]), u32(0), Buffer.alloc(16), credIdLength, rawId, Buffer.from(isoCBOR.encode(cose))]);
    const attestationObject = isoCBOR.encode(
      new Map<string, unknown>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', new Uint8Array(authData)],
      ]) as never,
    );
    const clientDataJSON = JSON.stringify({ type: 'webauthn.create', challenge: options.challenge, origin, crossOrigin: false });
    this.credentials.push(credential);
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      authenticatorAttachment: 'platform',
      response: { clientDataJSON: b64url(Buffer.from(clientDataJSON)), attestationObject: b64url(attestationObject), transports: ['internal'] },
      clientExtensionResults: {},
    };
  }

  authenticate(options: { challenge: string; rpId?: string; allowCredentials?: { id: string }[] }, overrides: CeremonyOverrides = {}) {
    const wanted = overrides.credentialId ?? options.allowCredentials?.[0]?.id;
    const credential = wanted ? this.credentials.find((c) => c.id === wanted) : this.credentials.at(-1);
    if (!credential) throw new Error('no such credential on this authenticator');
    const origin = overrides.origin ?? this.origin;
    const rpID = overrides.rpID ?? options.rpId ?? new URL(origin).hostname;
    if (this.counts) credential.counter += 1;
    const counter = overrides.counter ?? (this.counts ? credential.counter : 0);
    const authenticatorData = Buffer.concat([sha256(rpID), Buffer.from([0x05]), u32(counter)]);
    const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge: options.challenge, origin, crossOrigin: false }));
    const signature = sign('sha256', Buffer.concat([authenticatorData, sha256(clientDataJSON)]), credential.privateKey);
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      authenticatorAttachment: 'platform',
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authenticatorData),
        signature: b64url(signature),
        userHandle: credential.userHandle,
      },
      clientExtensionResults: {},
    };
  }
}
