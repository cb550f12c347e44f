import { Injectable } from '@nestjs/common';
import { banUser, revokeUserSessions, setUserRole, unbanUser, type AuditActor } from '@slipway/auth-core';
import pg from 'pg';

export interface ServiceUserRow {
  id: string;
  email: string;
  name: string;
  email_verified: boolean;
  created_at: Date;
  role: string;
  banned: boolean;
  ban_reason: string | null;
  ban_expires: Date | null;
}

const COLUMNS = 'id, email, name, email_verified, created_at, role, banned, ban_reason, ban_expires';

/**
 * The dashboard's reads and writes of an application's OWN database (`service_auth.users`), with
 * the application's own role: not the platform database, whose queries live in libs/platform-data.
 * The user-administration SQL (ban, unban, role, revoke, audit) is @slipway/auth-core's, shared
 * with the sign-in service; its session cache sees these writes through the tables' NOTIFY triggers.
 */
@Injectable()
export class DashboardSignInRepository {
  private async withTenant<T>(tenantUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: tenantUrl });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  }

  /** The application's users, read with the application's own role from its own database. */
  users(tenantUrl: string, search: string, limit: number): Promise<{ users: ServiceUserRow[]; total: number }> {
    return this.withTenant(tenantUrl, async (client) => {
      const pattern = `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      const where = search ? 'WHERE email ILIKE $1 OR name ILIKE $1' : 'WHERE $1::text IS NOT NULL';
      const rows = await client.query<ServiceUserRow>(`SELECT ${COLUMNS} FROM service_auth.users ${where} ORDER BY created_at DESC LIMIT ${limit}`, [pattern]);
      const count = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM service_auth.users ${where}`, [pattern]);
      return { users: rows.rows, total: count.rows[0]!.n };
    });
  }

  /** Applies one administrative change; the user afterwards, or null when the application has no such user. */
  administer(tenantUrl: string, userId: string, change: UserAdminChange, by: AuditActor): Promise<ServiceUserRow | null> {
    return this.withTenant(tenantUrl, async (client) => {
      const found =
        change.kind === 'ban'
          ? (await banUser(client, userId, { reason: change.reason, expiresAt: change.expiresAt }, by)) !== null
          : change.kind === 'unban'
            ? await unbanUser(client, userId, by)
            : change.kind === 'set-role'
              ? await setUserRole(client, userId, change.role, by)
              : (await revokeUserSessions(client, userId, by)) !== null;
      if (!found) return null;
      const { rows } = await client.query<ServiceUserRow>(`SELECT ${COLUMNS} FROM service_auth.users WHERE id = $1`, [userId]);
      return rows[0] ?? null;
    });
  }
}

export type UserAdminChange =
  | { kind: 'ban'; reason: string; expiresAt: Date | null }
  | { kind: 'unban' }
  | { kind: 'set-role'; role: string }
  | { kind: 'revoke-sessions' };
