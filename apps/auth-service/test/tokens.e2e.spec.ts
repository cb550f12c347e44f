import { createPublicKey, createHmac, type KeyObject } from 'node:crypto';
import { SignJWT, createRemoteJWKSet, decodeProtectedHeader, exportJWK, generateKeyPair, jwtVerify, type CryptoKey, type JWTVerifyResult } from 'jose';
import { TokensService } from '../src/tokens/tokens.service.js';
import { TenantsService } from '../src/tenants/tenants.service.js';
import { startAuthHarness, originOf, TestClient, type AuthHarness } from './harness.js';

describe('JWTs and JWKS (real keys from the tenant database)', () => {
  let h: AuthHarness;
  let shop: { slug: string; authUrl: string };
  let blog: { slug: string; authUrl: string };
  let token: string;
  let userId: string;

  const verify = (jwt: string, tenant = shop): Promise<JWTVerifyResult> =>
    jwtVerify(jwt, createRemoteJWKSet(new URL(`${tenant.authUrl}/jwks`)), { issuer: tenant.authUrl, audience: tenant.authUrl, algorithms: ['EdDSA'] });

  beforeAll(async () => {
    h = await startAuthHarness('authtokens');
    shop = await h.createTenant('shop');
    blog = await h.createTenant('blog');
    const c = new TestClient(shop.authUrl, originOf('shop'));
    userId = (await (await c.signUp('ivy@example.com', 'correct horse battery', 'Ivy')).json()).user.id;
    const res = await c.get('/token');
    expect(res.status).toBe(200);
    token = (await res.json()).token;
  });
  afterAll(async () => {
    await h?.close();
  });

  it('issues an EdDSA JWT with kid, sub, email, name, iat, exp = iat + 15 min, iss = aud = {auth_url}', async () => {
    const { payload, protectedHeader } = await verify(token);
    expect(protectedHeader).toEqual({ alg: 'EdDSA', kid: expect.any(String) });
    expect(payload).toMatchObject({ sub: userId, email: 'ivy@example.com', name: 'Ivy', iss: shop.authUrl, aud: shop.authUrl });
    expect(payload.exp! - payload.iat!).toBe(900);
  });

  it('publishes the JWKS at /jwks and /.well-known/jwks.json with cache headers and no private parts', async () => {
    for (const path of ['/jwks', '/.well-known/jwks.json']) {
      const res = await fetch(`${shop.authUrl}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toMatch(/max-age=\d+/);
      const { keys } = await res.json();
      expect(keys).toEqual([{ kty: 'OKP', crv: 'Ed25519', x: expect.any(String), kid: decodeProtectedHeader(token).kid, alg: 'EdDSA', use: 'sig' }]);
    }
  });

  it('is rejected by another tenant’s keys, and forged, tampered or expired tokens are rejected', async () => {
    await expect(jwtVerify(token, createRemoteJWKSet(new URL(`${blog.authUrl}/jwks`)), { algorithms: ['EdDSA'] })).rejects.toThrow();
    await expect(verify(token, blog)).rejects.toThrow();

    const [header, payload] = token.split('.');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', kid: decodeProtectedHeader(token).kid })).toString('base64url')}.${payload}.`;
    await expect(verify(none)).rejects.toThrow();

    // HS256 "signed" with the public key as HMAC secret (the classic algorithm-confusion forgery).
    const { keys } = await (await fetch(`${shop.authUrl}/jwks`)).json();
    const publicPem = createPublicKey({ key: keys[0], format: 'jwk' }).export({ type: 'spki', format: 'pem' });
    const hsHeader = Buffer.from(JSON.stringify({ alg: 'HS256', kid: keys[0].kid })).toString('base64url');
    const hs = `${hsHeader}.${payload}.${createHmac('sha256', publicPem).update(`${hsHeader}.${payload}`).digest('base64url')}`;
    await expect(verify(hs)).rejects.toThrow();

    const tampered = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    tampered.sub = 'someone-else';
    await expect(verify(`${header}.${Buffer.from(JSON.stringify(tampered)).toString('base64url')}.${token.split('.')[2]}`)).rejects.toThrow();

    // Our own key, but a header that points elsewhere (jwk/jku) or an unknown kid: the verifier only trusts the JWKS.
    const attacker = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const embedded = await new SignJWT({ sub: userId })
      .setProtectedHeader({ alg: 'EdDSA', kid: keys[0].kid, jwk: await exportJWK(attacker.publicKey) })
      .setIssuer(shop.authUrl)
      .setAudience(shop.authUrl)
      .setExpirationTime('5m')
      .sign(attacker.privateKey);
    await expect(verify(embedded)).rejects.toThrow();
    const jku = await new SignJWT({ sub: userId })
      .setProtectedHeader({ alg: 'EdDSA', kid: 'unknown', jku: 'https://evil.com/jwks' })
      .setIssuer(shop.authUrl)
      .setAudience(shop.authUrl)
      .setExpirationTime('5m')
      .sign(attacker.privateKey);
    await expect(verify(jku)).rejects.toThrow();

    // Expired and not-yet-valid tokens signed with the tenant's real key.
    const tokens = h.app.get(TokensService);
    const tenant = await h.app.get(TenantsService).resolve('shop');
    const realKey = await (tokens as unknown as { signingKey(t: unknown): Promise<{ kid: string; key: CryptoKey | KeyObject }> }).signingKey(tenant);
    const expired = await new SignJWT({ sub: userId })
      .setProtectedHeader({ alg: 'EdDSA', kid: realKey.kid })
      .setIssuer(shop.authUrl)
      .setAudience(shop.authUrl)
      .setIssuedAt(Math.floor(Date.now() / 1000) - 3600)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
      .sign(realKey.key);
    await expect(verify(expired)).rejects.toThrow(/exp/);
    const future = await new SignJWT({ sub: userId })
      .setProtectedHeader({ alg: 'EdDSA', kid: realKey.kid })
      .setIssuer(shop.authUrl)
      .setAudience(shop.authUrl)
      .setNotBefore(Math.floor(Date.now() / 1000) + 3600)
      .setExpirationTime('2h')
      .sign(realKey.key);
    await expect(verify(future)).rejects.toThrow(/nbf/);
    // …and the real key does verify what it signed, so the failures above are the claims, not the key.
    const good = await new SignJWT({ sub: userId })
      .setProtectedHeader({ alg: 'EdDSA', kid: realKey.kid })
      .setIssuer(shop.authUrl)
      .setAudience(shop.authUrl)
      .setExpirationTime('5m')
      .sign(realKey.key);
    await expect(verify(good)).resolves.toBeDefined();

    // The service signs with node:crypto; its tokens are byte for byte what jose's SignJWT writes.
    const user = { id: userId, email: 'ivy@example.com', name: 'Ivy', email_verified: false } as Parameters<TokensService['sign']>[1];
    const ours = await tokens.sign(tenant, user);
    const { iat } = JSON.parse(Buffer.from(ours.split('.')[1]!, 'base64url').toString()) as { iat: number };
    const theirs = await new SignJWT({ email: user.email, name: user.name, emailVerified: user.email_verified })
      .setProtectedHeader({ alg: 'EdDSA', kid: realKey.kid })
      .setSubject(userId)
      .setIssuer(shop.authUrl)
      .setAudience(shop.authUrl)
      .setIssuedAt(iat)
      .setExpirationTime(iat + 15 * 60)
      .sign(realKey.key);
    expect(ours).toBe(theirs);
    await expect(verify(ours)).resolves.toBeDefined();
  });

  it('rotates with overlap: the new key is published before it signs, the old one stays listed until its tokens expired', async () => {
    const tokens = h.app.get(TokensService);
    const tenant = await h.app.get(TenantsService).resolve('shop');
    const oldKid = decodeProtectedHeader(token).kid;

    const ahead = await tokens.rotate(tenant, 600);
    let kids = (await (await fetch(`${shop.authUrl}/jwks`)).json()).keys.map((k: { kid: string }) => k.kid);
    expect(kids).toEqual([oldKid, ahead.kid]);
    const c = new TestClient(shop.authUrl, originOf('shop'));
    await c.signIn('ivy@example.com');
    expect(decodeProtectedHeader((await (await c.get('/token')).json()).token).kid).toBe(oldKid);

    // Rotate again with no lead: the newest key signs at once; the old tokens still verify.
    const now = await tokens.rotate(tenant, 0);
    const fresh = (await (await c.get('/token')).json()).token;
    expect(decodeProtectedHeader(fresh).kid).toBe(now.kid);
    await expect(verify(fresh)).resolves.toBeDefined();
    await expect(verify(token)).resolves.toBeDefined();

    // Once a retired key's last token has expired (+ cache time) it leaves the JWKS and its tokens fail.
    const db = h.app.get(TenantsService).db(tenant);
    await db.query(`UPDATE service_auth.jwks SET retires_at = now() - interval '26 minutes' WHERE id = $1`, [oldKid]);
    kids = (await (await fetch(`${shop.authUrl}/jwks`)).json()).keys.map((k: { kid: string }) => k.kid);
    expect(kids).not.toContain(oldKid);
    await expect(verify(token)).rejects.toThrow();
  });
});
