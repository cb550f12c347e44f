import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createAuthServer } from './auth-server.js';
import { verifyClientAddress } from './client-address.js';
import { rawRequest } from '../test/support/raw-http.js';

/**
 * The adapter in a real Express app on a real port, forwarding to a real HTTP server that records
 * what arrives (the sign-in service itself is exercised in test/sign-in-e2e.spec.ts).
 */
describe('Express adapter (real Express, real HTTP)', () => {
  let upstream: Server;
  let app: Server;
  let appUrl: string;
  const seen: { url: string; headers: Record<string, string | string[] | undefined>; body: string }[] = [];

  const listen = (server: Server) =>
    new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.setHeader('content-type', 'application/json');
        res.setHeader('set-cookie', [
          '__Secure-slipway.session_token=abc.def; Max-Age=604800; Path=/a/shop; HttpOnly; Secure; SameSite=Lax',
          'slipway.state=x; Path=/a/shop/callback; Domain=auth.example; HttpOnly',
        ]);
        res.setHeader('access-control-allow-origin', 'http://elsewhere');
        res.end('{"ok":true}');
      });
    });
    const upstreamUrl = await listen(upstream);
    const auth = createAuthServer({ baseUrl: `${upstreamUrl}/a/shop`, cookieSecret: 'the-cookie-secret' });
    const server = express();
    server.set('trust proxy', 'loopback');
    // A body parser before the adapter: the adapter must send the same body on.
    server.use(express.json());
    server.use('/api/auth', auth.express);
    app = createServer(server);
    appUrl = await listen(app);
  });
  afterAll(async () => {
    await new Promise((r) => app.close(r));
    await new Promise((r) => upstream.close(r));
  });

  it('forwards path, query, body, origin and only the service cookies; signs the visitor address; re-issues cookies first-party', async () => {
    const res = await fetch(`${appUrl}/api/auth/sign-in/email?x=1`, {
      method: 'POST',
      headers: {
        origin: 'http://localhost:5173',
        'content-type': 'application/json',
        cookie: 'app_session=private; __Host-slipway.session_token=t.s',
        'x-forwarded-for': '203.0.113.9',
      },
      body: JSON.stringify({ email: 'a@example.com', password: 'p' }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
    expect(res.headers.getSetCookie()).toEqual([
      '__Host-slipway.session_token=abc.def; Path=/; Max-Age=604800; HttpOnly; Secure; SameSite=Lax',
      'slipway.state=x; Path=/; HttpOnly',
    ]);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const got = seen.at(-1)!;
    expect(got.url).toBe('/a/shop/sign-in/email?x=1');
    expect(JSON.parse(got.body)).toEqual({ email: 'a@example.com', password: 'p' });
    expect(got.headers['origin']).toBe('http://localhost:5173');
    expect(got.headers['cookie']).toBe('__Secure-slipway.session_token=t.s');
    expect(verifyClientAddress('the-cookie-secret', got.headers['x-slipway-client-address'])).toBe('203.0.113.9');
  });

  it('answers 404 {code, message} to other spellings and never forwards them', async () => {
    const before = seen.length;
    for (const target of [
      '/api/auth',
      '/api/auth/',
      '/api/auth/sign-in/email/',
      '/api/auth//sign-in/email',
      '/api/auth/sign-in/%65mail',
      '/api/auth/sign-in/email;x',
      '/api/auth/sign-in%2femail',
      '/API/AUTH/sign-in/email',
      '//evil.example/api/auth/sign-in/email',
    ]) {
      const res = await rawRequest(appUrl, 'POST', target, { origin: 'http://localhost:5173', 'content-type': 'application/json' }, '{}');
      expect([target, res.status]).toEqual([target, 404]);
      if (target.startsWith('/api/auth')) expect(JSON.parse(res.body)).toEqual({ code: 'NOT_FOUND', message: 'Not found' });
    }
    expect(seen.slice(before).map((s) => s.url)).toEqual([]);
    // Dot segments (also %2e) and `\` are resolved by the URL parser first: the canonical path is what is forwarded (and counted).
    for (const target of ['/api/auth/x/../sign-in/email', '/api/auth/%2e/sign-in/email', '/api/auth/sign-in\\email']) {
      expect([target, (await rawRequest(appUrl, 'POST', target, { 'content-type': 'application/json' }, '{}')).status]).toEqual([target, 200]);
      expect(seen.at(-1)!.url).toBe('/a/shop/sign-in/email');
    }
  });

  it('forwards each __Host- cookie only when it is alone; duplicates and the old __Secure- name are cleared, never forwarded', async () => {
    const send = (cookie: string) => rawRequest(appUrl, 'GET', '/api/auth/get-session', { cookie });
    let res = await send('__Host-slipway.session_token=b.b; __Host-slipway.session_token=a.a; __Host-slipway.oauth_state=s');
    expect(seen.at(-1)!.headers['cookie']).toBe('__Secure-slipway.oauth_state=s');
    expect(res.setCookies[0]).toBe('__Host-slipway.session_token=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Lax');
    res = await send('__Secure-slipway.session_token=old.one');
    expect(seen.at(-1)!.headers['cookie']).toBeUndefined();
    expect(res.setCookies[0]).toBe('__Secure-slipway.session_token=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Lax');
    // Names are exact (the lower-case prefix is another cookie); whitespace around them is not part of them.
    const exact = await send(' __host-slipway.session_token=x.y ;  __Host-slipway.session_token = t.s ');
    expect(exact.setCookies.filter((c) => /Max-Age=0/.test(c))).toEqual([]);
    expect(seen.at(-1)!.headers['cookie']).toBe('__Secure-slipway.session_token=t.s');
  });

  it('answers 404 outside its mount path and passes GETs without a body', async () => {
    const res = await fetch(`${appUrl}/api/auth/get-session`);
    expect(res.status).toBe(200);
    expect(seen.at(-1)!.url).toBe('/a/shop/get-session');
    expect(seen.at(-1)!.body).toBe('');
  });
});
