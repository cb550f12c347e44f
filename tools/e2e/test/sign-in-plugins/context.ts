/**
 * What every sign-in plugin's through-the-platform test shares (issue 33): one platform as
 * `pnpm start` runs it, one owner's application with sign-in switched on, the owners' API to
 * switch plugins, Better Auth's own client in a browser-like fetch (cookie jar, the app's Origin),
 * the outbox, and the application's own database (`service_auth`).
 */
import { createAuthClient } from 'better-auth/client';
import pg from 'pg';
import type { SignInPluginsView } from '@slipway/contract';
import { Platform, type Account } from '../support/platform.js';

export interface PluginsContext {
  platform: Platform;
  account: Account;
  /** `{auth_url}` of the application: `http://127.0.0.1:{auth}/a/{slug}`. */
  authUrl: string;
  /** The application's own address, a trusted origin: what a browser on the app sends as Origin. */
  origin: string;
  /** PATCHes the owners' API (`…/sign-in/settings`) with the application's API key; returns the answer's JSON. */
  settings(body: { plugins?: Partial<Record<keyof SignInPluginsView, object>>; [key: string]: unknown }): Promise<any>;
  /** Emails the sign-in service wrote to the platform's outbox for `to`, newest first. */
  outbox(to: string): Promise<{ kind: string; subject: string; text_body: string; created_at: Date }[]>;
  /** A query on the application's own database (as the server's superuser, so tests see every row). */
  tenantQuery<T extends pg.QueryResultRow = any>(sql: string, params?: unknown[]): Promise<T[]>;
}

/** What the spec hands each plugin's tests: the context, set once its `beforeAll` ran. */
export type SharedContext = { current: PluginsContext };

export async function startPluginsContext(label: string): Promise<PluginsContext> {
  // The tests call the sign-in service from 127.0.0.1 as the edge would, each client with its own
  // X-Forwarded-For address: believed from loopback, so each has its own address allowance. The
  // generic OIDC test's issuer is a local server (http, 127.0.0.1): allowed on this test platform
  // only (docs/plugins/generic-oidc.md).
  const platform = await Platform.start(label, { AUTH_TRUSTED_PROXIES: '127.0.0.1', AUTH_OIDC_ALLOW_PRIVATE_ISSUERS: 'true' });
  const account = await platform.bootstrap(`owner-${label}@example.com`, 'Plugin Shop');
  await platform.enableSignIn(account);
  const authUrl = `http://127.0.0.1:${platform.ports.auth}/a/${account.slug}`;
  const gateway = `http://127.0.0.1:${platform.ports.gateway}`;
  let tenant: pg.Pool | undefined;
  const context: PluginsContext = {
    platform,
    account,
    authUrl,
    origin: account.appUrl,
    async settings(body) {
      const res = await fetch(`${gateway}/dashboard/api/applications/${account.applicationId}/sign-in/settings`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const json = await res.json();
      if (res.status !== 200) throw new Error(`settings ${res.status}: ${JSON.stringify(json)}`);
      return json;
    },
    outbox(to) {
      return platform.query('SELECT kind, subject, text_body, created_at FROM emails WHERE to_address = $1 ORDER BY created_at DESC', [to]);
    },
    async tenantQuery(sql, params = []) {
      if (!tenant) {
        const [row] = await platform.query<{ database_name: string }>('SELECT database_name FROM application_databases WHERE application_id = $1', [
          account.applicationId,
        ]);
        const url = new URL((await platform.runtime()).databaseUrl);
        url.pathname = `/${row!.database_name}`;
        tenant = new pg.Pool({ connectionString: url.toString(), max: 2 });
        tenant.on('error', () => undefined);
      }
      return (await tenant.query(sql, params)).rows;
    },
  };
  const stop = platform.stop.bind(platform);
  platform.stop = async () => {
    await tenant?.end();
    return stop();
  };
  return context;
}

/** Node has no cookie jar: a fetch that keeps cookies and sends the page's Origin, as a browser on the app would. */
export function browserLikeFetch(origin: string, forwardedFor: string) {
  const jar = new Map<string, string>();
  const impl = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const headers = new Headers(request.headers);
    headers.set('origin', origin);
    headers.set('x-forwarded-for', forwardedFor);
    if (jar.size) headers.set('cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(new Request(request, { headers, redirect: 'manual' }));
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(';')[0]!;
      const [name, value] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
      if (!value || /max-age=0/i.test(line)) jar.delete(name);
      else jar.set(name, value);
    }
    return res;
  };
  return { impl, jar };
}

let visitors = 0;

/**
 * Better Auth's own client with `plugins`, as the app's page would make it, with its own cookie
 * jar and, unless given, its own visitor address (so each client has its own rate-limit allowance).
 */
export function pluginClient<P extends any[]>(context: PluginsContext, plugins: P, forwardedFor?: string) {
  visitors++;
  const browser = browserLikeFetch(context.origin, forwardedFor ?? `198.51.${100 + Math.floor(visitors / 250)}.${(visitors % 250) + 1}`);
  const client = createAuthClient({ baseURL: context.authUrl, plugins, fetchOptions: { customFetchImpl: browser.impl } });
  return { client, jar: browser.jar };
}
