import { Injectable } from '@nestjs/common';
import type { TenantDb } from '../tenants/index.js';
import type { UserRow } from '../users/index.js';

export interface SessionRow {
  id: string;
  user_id: string;
  expires_at: Date;
  ip_address: string | null;
  user_agent: string | null;
  created_at: Date;
  updated_at: Date;
}

const SESSION_COLUMNS = 's.id, s.user_id, s.expires_at, s.ip_address, s.user_agent, s.created_at, s.updated_at';
const USER_COLUMNS = 'u.id AS u_id, u.name AS u_name, u.email AS u_email, u.email_verified AS u_email_verified, u.image AS u_image, u.created_at AS u_created_at, u.updated_at AS u_updated_at';

const SESSION_WITH_USER_SQL = `SELECT ${SESSION_COLUMNS}, ${USER_COLUMNS} FROM service_auth.sessions s JOIN service_auth.users u ON u.id = s.user_id WHERE s.token_hash = $1`;

/** Sessions in the tenant's `service_auth.sessions`; tokens only ever as SHA-256. */
@Injectable()
export class SessionsRepository {
  async create(db: TenantDb, session: { id: string; tokenHash: string; userId: string; expiresAt: Date; ip: string; userAgent: string | null }): Promise<SessionRow> {
    const { rows } = await db.query<SessionRow>({
      name: 'auth-session-insert',
      text: `INSERT INTO service_auth.sessions AS s (id, token_hash, user_id, expires_at, ip_address, user_agent) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${SESSION_COLUMNS}`,
      values: [session.id, session.tokenHash, session.userId, session.expiresAt, session.ip, session.userAgent],
    });
    return rows[0]!;
  }

  async findWithUser(db: TenantDb, tokenHash: string): Promise<{ session: SessionRow; user: UserRow } | null> {
    // Named: each connection parses and plans it once (every get-session and token runs it).
    const { rows } = await db.query({ name: 'auth-session-with-user', text: SESSION_WITH_USER_SQL, values: [tokenHash] });
    const r = rows[0];
    if (!r) return null;
    return {
      session: { id: r.id, user_id: r.user_id, expires_at: r.expires_at, ip_address: r.ip_address, user_agent: r.user_agent, created_at: r.created_at, updated_at: r.updated_at },
      user: { id: r.u_id, name: r.u_name, email: r.u_email, email_verified: r.u_email_verified, image: r.u_image, created_at: r.u_created_at, updated_at: r.u_updated_at },
    };
  }

  async extend(db: TenantDb, id: string, expiresAt: Date): Promise<void> {
    await db.query('UPDATE service_auth.sessions SET expires_at = $2, updated_at = now() WHERE id = $1', [id, expiresAt]);
  }

  async listActive(db: TenantDb, userId: string): Promise<SessionRow[]> {
    const { rows } = await db.query<SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM service_auth.sessions s WHERE s.user_id = $1 AND s.expires_at > now() ORDER BY s.created_at`,
      [userId],
    );
    return rows;
  }

  async delete(db: TenantDb, id: string): Promise<void> {
    await db.query('DELETE FROM service_auth.sessions WHERE id = $1', [id]);
  }

  /** Revokes one of the user's sessions, named by its raw token or (as list-sessions shows other sessions) its id. */
  async deleteOwned(db: TenantDb, userId: string, tokenHash: string, id: string): Promise<number> {
    const { rowCount } = await db.query('DELETE FROM service_auth.sessions WHERE user_id = $1 AND (token_hash = $2 OR id = $3)', [userId, tokenHash, id]);
    return rowCount ?? 0;
  }

  async deleteAllOf(db: TenantDb, userId: string, exceptId: string | null = null): Promise<void> {
    await db.query('DELETE FROM service_auth.sessions WHERE user_id = $1 AND ($2::text IS NULL OR id <> $2)', [userId, exceptId]);
  }
}
