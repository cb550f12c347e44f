import type { PoolClient } from 'pg';
import type { ServiceAuthPool } from './service-auth-db.js';
import { clearActiveOrganization, setActiveOrganization } from './sessions.store.js';

export interface OrganizationRow {
  id: string;
  name: string;
  slug: string;
  logo: string | null;
  /** JSON text, as Better Auth stores it. */
  metadata: string | null;
  created_at: Date;
}

export interface MemberRow {
  id: string;
  organization_id: string;
  user_id: string;
  /** Comma-separated roles. */
  role: string;
  created_at: Date;
}

export interface MemberWithUser extends MemberRow {
  user: { id: string; name: string; email: string; image: string | null };
}

export type InvitationStatus = 'pending' | 'accepted' | 'rejected' | 'canceled';

export interface InvitationRow {
  id: string;
  organization_id: string;
  email: string;
  role: string;
  status: InvitationStatus;
  expires_at: Date;
  inviter_id: string;
  created_at: Date;
}

const ORG = 'o.id, o.name, o.slug, o.logo, o.metadata, o.created_at';
const MEMBER = 'm.id, m.organization_id, m.user_id, m.role, m.created_at';
const MEMBER_WITH_USER = `${MEMBER}, json_build_object('id', u.id, 'name', u.name, 'email', u.email, 'image', u.image) AS "user"`;
const INVITATION = 'i.id, i.organization_id, i.email, i.role, i.status, i.expires_at, i.inviter_id, i.created_at';

/** Columns list-members may sort and filter on (Better Auth's member fields). */
export const MEMBER_FIELDS: Record<string, string> = {
  id: 'm.id',
  organizationId: 'm.organization_id',
  userId: 'm.user_id',
  role: 'm.role',
  createdAt: 'm.created_at',
};

export interface MemberListQuery {
  limit: number;
  offset: number;
  sortBy?: string | undefined;
  sortDirection?: 'asc' | 'desc' | undefined;
  filter?: { column: string; operator: 'eq' | 'ne' | 'in' | 'not_in'; value: unknown } | undefined;
}

/**
 * Organizations, members and invitations in `service_auth`. The one session column they own
 * (`sessions.active_organization_id`) is written by sessions.store.ts's functions, inside these
 * transactions where it must change with them. Every write that a session's JWT reflects is followed,
 * in the service, by `SessionsService.invalidateUsers` for the users concerned.
 */
export class OrganizationStore<Db extends ServiceAuthPool = ServiceAuthPool> {
  async findOrganization(db: Db, by: { id: string } | { slug: string }): Promise<OrganizationRow | null> {
    const [column, value] = 'id' in by ? ['id', by.id] : ['slug', by.slug];
    const { rows } = await db.query<OrganizationRow>(`SELECT ${ORG} FROM service_auth.organizations o WHERE o.${column} = $1`, [value]);
    return rows[0] ?? null;
  }

  /** The organization, its creator as member, and (unless kept) the creator's session's active organization — together or not at all. Null when the slug is taken. */
  async createWithCreator(
    db: Db,
    org: Omit<OrganizationRow, 'created_at'>,
    member: Omit<MemberRow, 'created_at'>,
    activateForSession: string | null,
  ): Promise<{ organization: OrganizationRow; member: MemberRow } | null> {
    return transaction(db, async (client) => {
      const created = await client.query<OrganizationRow>(
        `INSERT INTO service_auth.organizations AS o (id, name, slug, logo, metadata) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (slug) DO NOTHING RETURNING ${ORG}`,
        [org.id, org.name, org.slug, org.logo, org.metadata],
      );
      if (!created.rows[0]) return null;
      const added = await client.query<MemberRow>(
        `INSERT INTO service_auth.members AS m (id, organization_id, user_id, role) VALUES ($1, $2, $3, $4) RETURNING ${MEMBER}`,
        [member.id, member.organization_id, member.user_id, member.role],
      );
      if (activateForSession) await setActiveOrganization(client, activateForSession, org.id);
      return { organization: created.rows[0], member: added.rows[0]! };
    });
  }

  async updateOrganization(
    db: Db,
    id: string,
    changes: { name?: string | undefined; slug?: string | undefined; logo?: string | null | undefined; metadata?: string | undefined },
  ): Promise<OrganizationRow | null> {
    const sets: string[] = [];
    const values: unknown[] = [id];
    for (const [column, value] of Object.entries(changes)) {
      if (value === undefined) continue;
      values.push(value);
      sets.push(`${column} = $${values.length}`);
    }
    if (sets.length === 0) return this.findOrganization(db, { id });
    const { rows } = await db.query<OrganizationRow>(`UPDATE service_auth.organizations o SET ${sets.join(', ')} WHERE o.id = $1 RETURNING ${ORG}`, values);
    return rows[0] ?? null;
  }

  /** Deletes the organization (members and invitations cascade; sessions' active organization is set null); returns the users who were members. */
  async deleteOrganization(db: Db, id: string): Promise<string[]> {
    const { rows } = await db.query<{ user_id: string }>(
      'WITH gone AS (DELETE FROM service_auth.organizations WHERE id = $1) SELECT user_id FROM service_auth.members WHERE organization_id = $1',
      [id],
    );
    return rows.map((r) => r.user_id);
  }

  async listOrganizationsOf(db: Db, userId: string): Promise<OrganizationRow[]> {
    const { rows } = await db.query<OrganizationRow>(
      `SELECT ${ORG} FROM service_auth.members m JOIN service_auth.organizations o ON o.id = m.organization_id WHERE m.user_id = $1 ORDER BY m.created_at, o.id`,
      [userId],
    );
    return rows;
  }

  async setActiveOrganization(db: Db, sessionId: string, organizationId: string | null): Promise<void> {
    await setActiveOrganization(db, sessionId, organizationId);
  }

  async findMember(db: Db, organizationId: string, userId: string): Promise<MemberWithUser | null> {
    const { rows } = await db.query<MemberWithUser>(
      `SELECT ${MEMBER_WITH_USER} FROM service_auth.members m JOIN service_auth.users u ON u.id = m.user_id WHERE m.organization_id = $1 AND m.user_id = $2`,
      [organizationId, userId],
    );
    return rows[0] ?? null;
  }

  async findMemberById(db: Db, id: string): Promise<MemberWithUser | null> {
    const { rows } = await db.query<MemberWithUser>(
      `SELECT ${MEMBER_WITH_USER} FROM service_auth.members m JOIN service_auth.users u ON u.id = m.user_id WHERE m.id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  async findMemberByEmail(db: Db, organizationId: string, email: string): Promise<MemberWithUser | null> {
    const { rows } = await db.query<MemberWithUser>(
      `SELECT ${MEMBER_WITH_USER} FROM service_auth.members m JOIN service_auth.users u ON u.id = m.user_id WHERE m.organization_id = $1 AND lower(u.email) = lower($2)`,
      [organizationId, email],
    );
    return rows[0] ?? null;
  }

  /** Every member's roles: how many owners remain. */
  async memberRoles(db: Db, organizationId: string): Promise<string[]> {
    const { rows } = await db.query<{ role: string }>('SELECT role FROM service_auth.members WHERE organization_id = $1', [organizationId]);
    return rows.map((r) => r.role);
  }

  async countMembers(db: Db, organizationId: string): Promise<number> {
    const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM service_auth.members WHERE organization_id = $1', [organizationId]);
    return rows[0]!.n;
  }

  async listMembers(db: Db, organizationId: string, query: MemberListQuery): Promise<{ members: MemberWithUser[]; total: number }> {
    const values: unknown[] = [organizationId];
    let where = 'm.organization_id = $1';
    if (query.filter) {
      const { column, operator, value } = query.filter;
      values.push(value);
      const p = `$${values.length}`;
      where +=
        operator === 'eq'
          ? ` AND ${column} = ${p}`
          : operator === 'ne'
            ? ` AND ${column} <> ${p}`
            : operator === 'in'
              ? ` AND ${column} = ANY(${p})`
              : ` AND NOT (${column} = ANY(${p}))`;
    }
    const order = query.sortBy ? `${query.sortBy} ${query.sortDirection === 'desc' ? 'DESC' : 'ASC'}, m.id` : 'm.created_at, m.id';
    const total = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM service_auth.members m WHERE ${where}`, values);
    const { rows } = await db.query<MemberWithUser>(
      `SELECT ${MEMBER_WITH_USER} FROM service_auth.members m JOIN service_auth.users u ON u.id = m.user_id WHERE ${where} ORDER BY ${order} LIMIT ${query.limit} OFFSET ${query.offset}`,
      values,
    );
    return { members: rows, total: total.rows[0]!.n };
  }

  async updateMemberRole(db: Db, id: string, role: string): Promise<MemberRow | null> {
    const { rows } = await db.query<MemberRow>(`UPDATE service_auth.members m SET role = $2 WHERE m.id = $1 RETURNING ${MEMBER}`, [id, role]);
    return rows[0] ?? null;
  }

  /** Removes a membership and clears that organization from every session of the user that has it active. */
  async deleteMember(db: Db, member: MemberRow): Promise<void> {
    await transaction(db, async (client) => {
      await client.query('DELETE FROM service_auth.members WHERE id = $1', [member.id]);
      await clearActiveOrganization(client, member.user_id, member.organization_id);
    });
  }

  async createInvitation(db: Db, invitation: Omit<InvitationRow, 'created_at' | 'status'>): Promise<InvitationRow> {
    const { rows } = await db.query<InvitationRow>(
      `INSERT INTO service_auth.invitations AS i (id, organization_id, email, role, expires_at, inviter_id) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${INVITATION}`,
      [invitation.id, invitation.organization_id, invitation.email, invitation.role, invitation.expires_at, invitation.inviter_id],
    );
    return rows[0]!;
  }

  async findInvitation(db: Db, id: string): Promise<InvitationRow | null> {
    const { rows } = await db.query<InvitationRow>(`SELECT ${INVITATION} FROM service_auth.invitations i WHERE i.id = $1`, [id]);
    return rows[0] ?? null;
  }

  /** Pending, unexpired invitations of an organization (for one email when given). */
  async pendingInvitations(db: Db, organizationId: string, email?: string): Promise<InvitationRow[]> {
    const { rows } = await db.query<InvitationRow>(
      `SELECT ${INVITATION} FROM service_auth.invitations i WHERE i.organization_id = $1 AND i.status = 'pending' AND i.expires_at > now() AND ($2::text IS NULL OR i.email = $2) ORDER BY i.created_at`,
      [organizationId, email ?? null],
    );
    return rows;
  }

  async listInvitations(db: Db, organizationId: string): Promise<InvitationRow[]> {
    const { rows } = await db.query<InvitationRow>(`SELECT ${INVITATION} FROM service_auth.invitations i WHERE i.organization_id = $1 ORDER BY i.created_at`, [
      organizationId,
    ]);
    return rows;
  }

  async listInvitationsTo(db: Db, email: string): Promise<(InvitationRow & { organization_name: string })[]> {
    const { rows } = await db.query<InvitationRow & { organization_name: string }>(
      `SELECT ${INVITATION}, o.name AS organization_name FROM service_auth.invitations i JOIN service_auth.organizations o ON o.id = i.organization_id WHERE i.email = $1 AND i.status = 'pending' ORDER BY i.created_at`,
      [email],
    );
    return rows;
  }

  async renewInvitation(db: Db, id: string, expiresAt: Date): Promise<InvitationRow | null> {
    const { rows } = await db.query<InvitationRow>(`UPDATE service_auth.invitations i SET expires_at = $2 WHERE i.id = $1 RETURNING ${INVITATION}`, [
      id,
      expiresAt,
    ]);
    return rows[0] ?? null;
  }

  /** Moves an invitation to `status` (from `from` when given); null when it was not in that state. */
  async setInvitationStatus(db: Db, id: string, status: InvitationStatus, from?: InvitationStatus): Promise<InvitationRow | null> {
    const { rows } = await db.query<InvitationRow>(
      `UPDATE service_auth.invitations i SET status = $2 WHERE i.id = $1 AND ($3::text IS NULL OR i.status = $3) RETURNING ${INVITATION}`,
      [id, status, from ?? null],
    );
    return rows[0] ?? null;
  }

  /**
   * Accepts a pending, unexpired invitation for the user: the invitation becomes accepted, the
   * user a member with its role, and the session's active organization the invitation's — all or
   * nothing. Null when the invitation was no longer pending (a parallel accept) or had expired.
   */
  async accept(
    db: Db,
    invitationId: string,
    member: { id: string; userId: string },
    sessionId: string,
  ): Promise<{ invitation: InvitationRow; member: MemberRow } | null> {
    return transaction(db, async (client) => {
      const accepted = await client.query<InvitationRow>(
        `UPDATE service_auth.invitations i SET status = 'accepted' WHERE i.id = $1 AND i.status = 'pending' AND i.expires_at > now() RETURNING ${INVITATION}`,
        [invitationId],
      );
      const invitation = accepted.rows[0];
      if (!invitation) return null;
      const added = await client.query<MemberRow>(
        `INSERT INTO service_auth.members AS m (id, organization_id, user_id, role) VALUES ($1, $2, $3, $4) RETURNING ${MEMBER}`,
        [member.id, invitation.organization_id, member.userId, invitation.role],
      );
      await setActiveOrganization(client, sessionId, invitation.organization_id);
      return { invitation, member: added.rows[0]! };
    });
  }
}

async function transaction<T>(db: ServiceAuthPool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query(result === null ? 'ROLLBACK' : 'COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
