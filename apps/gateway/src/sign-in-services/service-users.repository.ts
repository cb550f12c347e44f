import { Injectable } from '@nestjs/common';
import {
  banUser,
  findServiceUser,
  listServiceUsers,
  revokeUserSessions,
  setUserRole,
  unbanUser,
  type AuditActor,
  type ServiceUserRow,
} from '@slipway/sign-in-core';
import pg from 'pg';

/**
 * The owners' API's reads and writes of an application's OWN database (`service_auth.users`), with
 * the application's own role: not the platform database, whose queries live in libs/platform-data.
 * All the SQL (users list, ban, unban, role, revoke, audit) is @slipway/sign-in-core's, shared
 * with the sign-in service; its session cache sees these writes through the tables' NOTIFY triggers.
 */
@Injectable()
export class ServiceUsersRepository {
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
    return this.withTenant(tenantUrl, (client) => listServiceUsers(client, search, limit));
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
      return findServiceUser(client, userId);
    });
  }
}

export type { ServiceUserRow };

export type UserAdminChange =
  { kind: 'ban'; reason: string; expiresAt: Date | null } | { kind: 'unban' } | { kind: 'set-role'; role: string } | { kind: 'revoke-sessions' };
