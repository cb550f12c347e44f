import type { InvitationRow, MemberRow, MemberWithUser, OrganizationRow } from './organization.repository.js';

/**
 * Better Auth's organization object. `metadata` is the stored JSON text on reads and the parsed
 * object in the answers of create and update, exactly as Better Auth's adapter returns them.
 */
export function organizationView(row: OrganizationRow, parseMetadata = false) {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    logo: row.logo,
    metadata: parseMetadata ? (row.metadata ? (JSON.parse(row.metadata) as unknown) : undefined) : row.metadata,
    createdAt: row.created_at,
  };
}

export function memberView(row: MemberRow) {
  return { id: row.id, organizationId: row.organization_id, userId: row.user_id, role: row.role, createdAt: row.created_at };
}

export function memberWithUserView(row: MemberWithUser) {
  return { ...memberView(row), user: row.user };
}

export function invitationView(row: InvitationRow) {
  return {
    id: row.id,
    organizationId: row.organization_id,
    email: row.email,
    role: row.role,
    status: row.status,
    expiresAt: row.expires_at,
    inviterId: row.inviter_id,
    createdAt: row.created_at,
  };
}
