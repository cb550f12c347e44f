/**
 * Passkeys in a real browser: a deployed app on its own address (`http://{slug}.localhost:{edge}`)
 * mounts @slipway/sign-in-sdk's proxy at /api/auth and serves a page with Better Auth's client and
 * `passkeyClient` bundled; Chromium, with a virtual authenticator from its WebAuthn domain (CDP),
 * signs up, adds a passkey, signs out and signs in with it. The relying party is the app's host.
 */
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { chromium, type BrowserContext } from 'playwright-core';
import type { SharedContext } from './context.js';
import { ROOT } from '../support/platform.js';

const E2E_DIR = join(ROOT, 'tools/e2e');

const SERVER = `// A small app: sign-in through @slipway/sign-in-sdk (the platform's variables), a static page.
import express from 'express';
import { createAuthServer } from './vendor/sign-in-sdk/index.js';

const auth = createAuthServer();
const app = express();
app.set('trust proxy', 'loopback');
app.use('/api/auth', auth.express);
app.use(express.static('public'));
const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('passkey shop listening on ' + process.env.PORT));
const stop = () => server.close(() => auth.close().then(() => process.exit(0)));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
`;

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>Passkey shop</title><script src="/auth.js"></script></head>
<body><h1>Passkey shop</h1><pre id="out"></pre></body></html>
`;

/** What the page's script holds: Better Auth's own client with passkeyClient, on the app's /api/auth. */
const CLIENT_ENTRY = `
import { createAuthClient } from 'better-auth/client';
import { passkeyClient } from '@better-auth/passkey/client';
window.auth = createAuthClient({ baseURL: location.origin + '/api/auth', plugins: [passkeyClient()] });
`;

/** The project as a user would push it: the server library vendored (as sign-in.spec.ts's shop), the page's script bundled now. */
async function passkeyProject(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'slipway-passkey-shop-'));
  await writeFile(join(dir, 'server.mjs'), SERVER);
  await mkdir(join(dir, 'vendor'));
  await cp(join(ROOT, 'libs/sign-in-sdk/dist'), join(dir, 'vendor/sign-in-sdk'), { recursive: true, filter: (src) => !src.endsWith('.map') });
  await mkdir(join(dir, 'public'));
  await writeFile(join(dir, 'public/index.html'), PAGE);
  await build({
    stdin: { contents: CLIENT_ENTRY, resolveDir: E2E_DIR, loader: 'js' },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'chrome120',
    outfile: join(dir, 'public/auth.js'),
    logLevel: 'warning',
  });
  const manifest = {
    name: 'passkey-shop',
    private: true,
    type: 'module',
    scripts: { start: 'node server.mjs' },
    engines: { node: '>=20' },
    dependencies: { express: '5.3.0', jose: '6.2.17', pg: '8.16.3' },
  };
  await writeFile(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return dir;
}

export function passkeyTests(shared: SharedContext) {
  it('registers a passkey in Chromium with a virtual authenticator on the app’s own address, signs out and signs in with it', async () => {
    const ctx = shared.current;
    const appOrigin = `http://${ctx.account.slug}.localhost:${ctx.platform.ports.edge}`;
    await ctx.settings({ plugins: { passkey: { enabled: true } } });
    const project = await passkeyProject();
    const profile = await mkdtemp(join(tmpdir(), 'slipway-chromium-passkey-'));
    let browser: BrowserContext | undefined;
    try {
      expect((await readFile(join(project, 'public/auth.js'), 'utf8')).length).toBeGreaterThan(1000);
      const deploy = await ctx.platform.cli(['deploy', project, '--json'], { SLIPWAY_API_KEY: ctx.account.apiKey });
      const task = JSON.parse(deploy.stdout);
      expect({ code: deploy.code, status: task.status, error: task.error }).toEqual({ code: 0, status: 'succeeded', error: undefined });

      browser = await chromium.launchPersistentContext(profile, {
        executablePath: '/usr/bin/chromium',
        headless: true,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
      });
      const page = browser.pages()[0] ?? (await browser.newPage());
      const logs: string[] = [];
      page.on('console', (message) => logs.push(message.text()));
      await page.goto(`${appOrigin}/`);
      await page.getByRole('heading', { name: 'Passkey shop' }).waitFor();

      const cdp = await browser.newCDPSession(page);
      await cdp.send('WebAuthn.enable', { enableUI: false });
      const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: {
          protocol: 'ctap2',
          transport: 'internal',
          hasResidentKey: true,
          hasUserVerification: true,
          isUserVerified: true,
          automaticPresenceSimulation: true,
        },
      });

      const signUp = await page.evaluate(() =>
        (globalThis as any).auth.signUp.email({ email: 'passkey-browser@example.com', password: 'a long passphrase', name: 'Petra' }),
      );
      expect(signUp.error).toBeNull();
      const added = await page.evaluate(() => (globalThis as any).auth.passkey.addPasskey({ name: 'virtual authenticator' }));
      if (added.error) throw new Error(`addPasskey: ${JSON.stringify(added.error)}; page console: ${logs.join(' | ')}`);
      expect(added.data).toMatchObject({ name: 'virtual authenticator', deviceType: expect.any(String) });
      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      expect(credentials).toHaveLength(1);
      expect(credentials[0]).toMatchObject({ rpId: `${ctx.account.slug}.localhost`, isResidentCredential: true });

      expect((await page.evaluate(() => (globalThis as any).auth.signOut())).error).toBeNull();
      expect((await page.evaluate(() => (globalThis as any).auth.getSession())).data).toBeNull();

      const signedIn = await page.evaluate(() => (globalThis as any).auth.signIn.passkey());
      if (signedIn.error) throw new Error(`signIn.passkey: ${JSON.stringify(signedIn.error)}; page console: ${logs.join(' | ')}`);
      expect(signedIn.data).toMatchObject({ user: { email: 'passkey-browser@example.com', name: 'Petra' } });
      const session = await page.evaluate(() => (globalThis as any).auth.getSession());
      expect(session.data?.user).toMatchObject({ email: 'passkey-browser@example.com' });
      // The session cookie is the app's own, first-party (re-issued by @slipway/sign-in-sdk).
      expect((await browser.cookies(appOrigin)).map((c) => c.name)).toContain('__Host-slipway.session_token');

      const rows = await ctx.tenantQuery(
        `SELECT p.name, p.credential_id, p.counter, p.backed_up, u.email FROM service_auth.passkeys p JOIN service_auth.users u ON u.id = p.user_id WHERE u.email = $1`,
        ['passkey-browser@example.com'],
      );
      expect(rows).toEqual([
        {
          name: 'virtual authenticator',
          credential_id: credentials[0]!.credentialId.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''),
          counter: expect.any(String),
          backed_up: false,
          email: 'passkey-browser@example.com',
        },
      ]);
      // The virtual authenticator counts its signatures: the stored counter is its count after the sign-in.
      const after = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      expect(after.credentials[0]!.signCount).toBeGreaterThan(credentials[0]!.signCount);
      expect(Number(rows[0].counter)).toBe(after.credentials[0]!.signCount);
    } finally {
      await browser?.close();
      await rm(profile, { recursive: true, force: true });
      await rm(project, { recursive: true, force: true });
    }
  }, 420_000);
}
