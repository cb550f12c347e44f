import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';

export interface SignInClaims extends JWTPayload {
  sub: string;
  email?: string;
  name?: string;
  emailVerified?: boolean;
}

/** Verifies JWTs of the sign-in service: EdDSA only, issuer and audience = the service's base URL. */
export function createTokenVerifier(baseUrl: string, jwksUrl: string): (jwt: string) => Promise<SignInClaims> {
  const keys = createRemoteJWKSet(new URL(jwksUrl));
  const expected = baseUrl.replace(/\/+$/, '');
  return async (jwt) => {
    const { payload } = await jwtVerify(jwt, keys, { algorithms: ['EdDSA'], issuer: expected, audience: expected });
    if (typeof payload.sub !== 'string') throw new Error('token has no subject');
    return payload as SignInClaims;
  };
}
