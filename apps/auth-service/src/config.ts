import { baseServerFields, loadConfig, masterKey, port, postgresUrl, publicUrlFields, z } from '@slipway/config';
import { normaliseIp } from '@slipway/service-kit';

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

export const authConfigSchema = z
  .object({
    ...baseServerFields,
    ...publicUrlFields,
    PORT: port(3001),
    SLIPWAY_MASTER_KEY: masterKey,
    /** Server of the applications' own databases (host/port used with each app's own role). Default: DATABASE_URL's server. */
    APP_DATABASES_ADMIN_URL: postgresUrl.optional(),
    /** Proxies whose X-Forwarded-For is believed (comma-separated IP addresses). */
    AUTH_TRUSTED_PROXIES: z
      .string()
      .default('')
      .transform((v) =>
        v
          .split(',')
          .map((s) => normaliseIp(s.trim()))
          .filter(Boolean),
      ),
    /** Sign-up/sign-in (and password) attempts allowed per window per client address and application. */
    AUTH_RATE_LIMIT_SIGN_IN_MAX: positiveInt(9),
    AUTH_RATE_LIMIT_SIGN_IN_WINDOW_SECONDS: positiveInt(10),
    /** Session reads (get-session, token, list-sessions, jwks) per window per client address and application. */
    AUTH_RATE_LIMIT_SESSION_MAX: positiveInt(300),
    AUTH_RATE_LIMIT_SESSION_WINDOW_SECONDS: positiveInt(10),
    /** Visitors whose session-read count a process holds in memory (least recently used dropped first): bounds the limiter's memory. */
    AUTH_RATE_LIMIT_SESSION_KEYS: positiveInt(100_000),
    /** End users' failed sign-ins per application and account (email) within the window before the account locks (docs/decisions/end-user-sign-in-limits.md). */
    AUTH_SIGN_IN_ACCOUNT_MAX_FAILURES: positiveInt(5),
    AUTH_SIGN_IN_ACCOUNT_WINDOW_SECONDS: positiveInt(900),
    /** The first lock; each further lock within 24 h doubles, up to the longest. */
    AUTH_SIGN_IN_ACCOUNT_LOCK_SECONDS: positiveInt(60),
    AUTH_SIGN_IN_ACCOUNT_MAX_LOCK_SECONDS: positiveInt(3600),
    /** Failed sign-ins per application and client address (IPv4, or IPv6 /64) over any accounts within the window, then 429 until it ends. */
    AUTH_SIGN_IN_ADDRESS_MAX_FAILURES: positiveInt(50),
    AUTH_SIGN_IN_ADDRESS_WINDOW_SECONDS: positiveInt(900),
    /** A session ends this many days after sign-in however active it is (it also ends after 7 days unused). */
    AUTH_SESSION_ABSOLUTE_DAYS: positiveInt(30),
    AUTH_BCRYPT_COST: z.coerce.number().int().min(4).max(15).default(10),
    AUTH_MAX_TENANT_POOLS: positiveInt(100),
    AUTH_TENANT_POOL_SIZE: positiveInt(5),
    /**
     * All tenant connections this process may hold at once (every pool together); lowered at boot
     * to what the server leaves (tenants/tenant-connection-budget.ts, docs/decisions/auth-connection-budget.md).
     */
    AUTH_MAX_TENANT_CONNECTIONS: positiveInt(50),
    /** Connections of the server kept for the platform's own services (gateway, build worker, edge, this one's platform pool, migrations). */
    AUTH_PLATFORM_RESERVED_CONNECTIONS: z.coerce.number().int().min(0).default(40),
    AUTH_TENANT_CACHE_SECONDS: z.coerce.number().int().min(0).default(30),
    /** How long a session read (get-session, token) waits for a restarting database server before it fails; 0 = fail at once. */
    AUTH_DB_RESTART_WAIT_MS: z.coerce.number().int().min(0).max(60_000).default(10_000),
    AUTH_REDIS_PREFIX: z.string().default('slipway:auth:'),
    /** Sessions (with their user) cached per process, least recently used out first; 0 = no session cache. */
    AUTH_SESSION_CACHE_SIZE: z.coerce.number().int().min(0).default(10_000),
    /** Longest time a cached session is served without reading the database again (never past the session's end). */
    AUTH_SESSION_CACHE_TTL_SECONDS: z.coerce.number().int().min(1).max(60).default(30),
    /**
     * A replica serves from its cache only while its own heartbeat, sent through Redis every
     * fence/5 ms, came back within this many ms; a writer waits at most this long (+100 ms) for
     * every replica to acknowledge an invalidation. See docs/decisions/session-cache.md.
     */
    AUTH_SESSION_CACHE_FENCE_MS: z.coerce.number().int().min(200).max(10_000).default(1000),
    /** Emails per application per hour through the shared development sender. */
    AUTH_DEV_EMAILS_PER_HOUR: positiveInt(30),
    /** When set (smtp:// or smtps://), outbox emails are also delivered over SMTP (nodemailer). */
    SMTP_URL: z
      .string()
      .refine((v) => /^smtps?:\/\//.test(v), 'must be an smtp:// or smtps:// URL')
      .optional(),
    SMTP_FROM: z.string().default('Slipway <no-reply@localhost>'),
    /**
     * Replaces social providers' endpoints, JSON: {"github":{"authorize":…,"token":…,"userInfo":…,"emails":…},"google":{…}}.
     * For GitHub Enterprise or a local OAuth2 test server; not per application, so owners cannot point the service elsewhere.
     */
    /**
     * Development and tests only: lets a tenant's OpenID Connect issuer (and the endpoints its
     * discovery names) use http and loopback, private, link-local or other internal addresses.
     * Off, such a URL is refused at the moment of connecting (docs/plugins/generic-oidc.md).
     */
    AUTH_OIDC_ALLOW_PRIVATE_ISSUERS: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
    AUTH_OAUTH_PROVIDER_URLS: z
      .string()
      .default('{}')
      .transform((v, ctx) => {
        try {
          return JSON.parse(v) as Record<string, Record<string, string>>;
        } catch {
          ctx.addIssue({ code: 'custom', message: 'must be JSON' });
          return z.NEVER;
        }
      }),
  })
  .transform((c) => ({ ...c, APP_DATABASES_ADMIN_URL: c.APP_DATABASES_ADMIN_URL ?? c.DATABASE_URL }));

export type AuthConfig = z.output<typeof authConfigSchema>;

/** The only place this app reads the environment. */
export function loadAuthConfig(env: NodeJS.ProcessEnv = process.env): AuthConfig {
  return loadConfig(authConfigSchema, env);
}

export const AUTH_CONFIG = Symbol('AUTH_CONFIG');
