import { hostname } from 'node:os';
import { dropApplicationDatabase } from '@slipway/sign-in-core';
import { decryptEnvelopeToString, envelopeBinding, keyringFromMasterKey } from '@slipway/crypto';
import { TEST_SERVER_URL } from '@slipway/testing';
import { DashboardClient } from './support/dashboard-client.js';
import { startGateway, type GatewayUnderTest } from './support/platform.js';

describe('owners’ API: OpenID Connect providers of the sign-in service (real HTTP, Postgres)', () => {
  let gw: GatewayUnderTest;
  let ada: DashboardClient;
  let appId: string;

  beforeAll(async () => {
    gw = await startGateway('sign-in-oidc', { BCRYPT_ROUNDS: '4' });
    ada = new DashboardClient(gw.url);
    await ada.signUp(`ada-oidc-${Date.now()}@example.com`);
    appId = (await ada.post('/applications', { name: 'Oidc Shop' })).json.id;
    expect((await ada.post(`/applications/${appId}/sign-in`)).status).toBe(200);
  });
  afterAll(async () => {
    if (appId) await dropApplicationDatabase(TEST_SERVER_URL, appId);
    await gw.close();
  });

  it('adds a provider (secret sealed to the application and provider, never returned), lists it with its callback URL, removes it', async () => {
    const on = await ada.get(`/applications/${appId}/sign-in`);
    expect(on.json.service.oidcProviders).toEqual({});
    const added = await ada.patch(`/applications/${appId}/sign-in/settings`, {
      oidcProviders: { 'corp-sso': { issuer: 'https://login.example.com/tenant-1', clientId: 'corp-client', clientSecret: 'corp-very-secret' } },
    });
    expect(added.status).toBe(200);
    expect(added.json.service.oidcProviders).toEqual({
      'corp-sso': { issuer: 'https://login.example.com/tenant-1', clientId: 'corp-client', callbackUrl: `${on.json.service.baseUrl}/callback/corp-sso` },
    });
    expect(added.text).not.toContain('corp-very-secret');
    expect((await ada.get(`/applications/${appId}/sign-in`)).text).not.toContain('corp-very-secret');
    const stored = (await gw.sql.query('SELECT settings FROM sign_in_services WHERE application_id = $1', [appId])).rows[0].settings;
    expect(JSON.stringify(stored)).not.toContain('corp-very-secret');
    const sealed = Buffer.from(stored.oidcProviders['corp-sso'].clientSecret, 'base64');
    const keyring = keyringFromMasterKey(gw.config.SLIPWAY_MASTER_KEY);
    expect(decryptEnvelopeToString(keyring, sealed, envelopeBinding.oauthClientSecret(appId, 'corp-sso'))).toBe('corp-very-secret');
    expect(() => decryptEnvelopeToString(keyring, sealed, envelopeBinding.oauthClientSecret(appId, 'other'))).toThrow();

    // Another provider beside it; then the first removed, the other kept.
    const two = await ada.patch(`/applications/${appId}/sign-in/settings`, {
      oidcProviders: { okta: { issuer: 'https://acme.okta.example', clientId: 'o', clientSecret: 's' } },
    });
    expect(Object.keys(two.json.service.oidcProviders).sort()).toEqual(['corp-sso', 'okta']);
    const removed = await ada.patch(`/applications/${appId}/sign-in/settings`, { oidcProviders: { 'corp-sso': null } });
    expect(Object.keys(removed.json.service.oidcProviders)).toEqual(['okta']);
  });

  it('refuses bad provider ids and issuers that are not https or reach the platform’s network (the sign-in service’s rule)', async () => {
    const patch = (oidcProviders: object) => ada.patch(`/applications/${appId}/sign-in/settings`, { oidcProviders });
    const provider = (issuer: string) => ({ issuer, clientId: 'c', clientSecret: 's' });
    for (const id of ['github', 'google', 'Corp', 'a_b', 'x'.repeat(33), ''])
      expect([id, (await patch({ [id]: provider('https://login.example.com') })).status]).toEqual([id, 400]);
    const issuers = [
      'http://login.example.com',
      'https://127.0.0.1:9000',
      'https://10.0.0.7',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]',
      'https://localhost:8443',
      `https://${hostname()}:8443`,
      'https://user:pw@login.example.com',
      'not a url',
    ];
    for (const issuer of issuers) {
      const res = await patch({ sso: provider(issuer) });
      expect([issuer, res.status, res.json.code]).toEqual([issuer, 400, 'bad_request']);
    }
    // The platform's own public host.
    const own = await patch({
      sso: provider(
        `https://${new URL(gw.config.PUBLIC_URL).hostname === 'localhost' ? new URL(gw.config.AUTH_PUBLIC_URL).host : new URL(gw.config.PUBLIC_URL).host}`,
      ),
    });
    expect(own.status).toBe(400);
    expect((await ada.get(`/applications/${appId}/sign-in`)).json.service.oidcProviders.sso).toBeUndefined();
  });
});
