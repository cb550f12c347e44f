import { createHash } from 'node:crypto';
import pg from 'pg';
import { SESSION_COOKIE, soleCookie, verifySessionCookie } from './cookies.js';

export interface SessionUser {
  id: string;
  email: string;
  name: string;
  emailVerified: boolean;
  image: string | null;
  createdAt: Date;
}

export interface Session {
  session: { id: string; userId: string; expiresAt: Date; createdAt: Date };
  user: SessionUser;
}

/** Anything carrying the visitor's cookies: a Web Request, a Node/Express request, or the Cookie header itself. */
export type CookieSource = Request | { headers: { cookie?: string | string[] | undefined } | Headers } | string | null | undefined;

export function cookieHeaderOf(source: CookieSource): string | null {
  if (!source) return null;
  if (typeof source === 'string') return source;
  const headers = source.headers;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get('cookie');
  const value = (headers as { cookie?: string | string[] }).cookie;
  return Array.isArray(value) ? value.join('; ') : (value ?? null);
}

/**
 * Reads the session without calling the sign-in service: the cookie's signature is checked with
 * the cookie secret, then the session is looked up by the SHA-256 of its token in `service_auth`.
 */
export class SessionReader {
  private pool: pg.Pool | undefined;

  constructor(
    private readonly cookieSecret: string,
    private readonly databaseUrl: string | undefined,
    private readonly absoluteSessionDays: number,
  ) {}

  /**
   * Exactly one `__Host-slipway.session_token`, correctly signed: two of them (whatever their
   * order) are ambiguous and mean no session; the old `__Secure-` name is not read on the app's host.
   */
  async getSession(source: CookieSource): Promise<Session | null> {
    const token = verifySessionCookie(this.cookieSecret, soleCookie(cookieHeaderOf(source), SESSION_COOKIE));
    if (!token) return null;
    const { rows } = await this.db().query(
      `SELECT s.id, s.user_id, s.expires_at, s.created_at, u.email, u.name, u.email_verified, u.image, u.created_at AS user_created_at
         FROM service_auth.sessions s JOIN service_auth.users u ON u.id = s.user_id
        WHERE s.token_hash = $1 AND s.expires_at > now() AND s.created_at > now() - make_interval(days => $2)`,
      [createHash('sha256').update(token).digest('hex'), this.absoluteSessionDays],
    );
    const r = rows[0];
    if (!r) return null;
    return {
      session: { id: r.id, userId: r.user_id, expiresAt: r.expires_at, createdAt: r.created_at },
      user: { id: r.user_id, email: r.email, name: r.name, emailVerified: r.email_verified, image: r.image, createdAt: r.user_created_at },
    };
  }

  async close(): Promise<void> {
    await this.pool?.end();
    this.pool = undefined;
  }

  private db(): pg.Pool {
    if (!this.databaseUrl) throw new Error('@slipway/sign-in-sdk: getSession needs DATABASE_URL (the application database holding service_auth)');
    this.pool ??= new pg.Pool({ connectionString: this.databaseUrl, max: 5 });
    return this.pool;
  }
}
