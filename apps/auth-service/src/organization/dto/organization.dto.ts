import { z } from '@slipway/config';
import { AuthErrors } from '../../common/index.js';

// Bodies and queries as Better Auth's organization plugin (1.7.25) declares them, with lengths bounded.
const id = z.string().max(256);
const name = z.string().min(1).max(200);
const slug = z.string().min(1).max(200);
const logo = z.string().max(2048).nullish();
const metadata = z.record(z.string(), z.any()).optional();
const roles = z.union([z.string().max(200), z.array(z.string().max(200)).max(10)]);

export const createOrganizationBody = z.object({
  name,
  slug,
  userId: z.unknown().optional(),
  logo,
  metadata,
  keepCurrentActiveOrganization: z.boolean().optional(),
});
export const updateOrganizationBody = z.object({
  data: z.object({ name: name.optional(), slug: slug.optional(), logo, metadata }).partial(),
  organizationId: id.optional(),
});
export const organizationIdBody = z.object({ organizationId: id });
export const checkSlugBody = z.object({ slug: z.string().max(200) });
export const setActiveBody = z.object({ organizationId: id.nullable().optional(), organizationSlug: z.string().max(200).optional() });
export const inviteBody = z.object({
  email: z.string().max(320),
  role: roles,
  organizationId: id.optional(),
  resend: z.boolean().optional(),
  teamId: z.unknown().optional(),
});
export const invitationIdBody = z.object({ invitationId: id });
export const removeMemberBody = z.object({ memberIdOrEmail: z.string().max(320), organizationId: id.optional() });
export const updateMemberRoleBody = z.object({ role: roles, memberId: id, organizationId: id.optional() });
const permissions = z.record(z.string().max(100), z.array(z.string().max(100)).max(50));
export const hasPermissionBody = z.object({ organizationId: id.optional(), permission: permissions.optional(), permissions: permissions.optional() });

export const fullOrganizationQuery = z.object({
  organizationId: id.optional(),
  organizationSlug: z.string().max(200).optional(),
  membersLimit: z.coerce.number().int().min(0).optional(),
});
export const invitationQuery = z.object({ id });
export const listInvitationsQuery = z.object({ organizationId: id.optional() });
export const userInvitationsQuery = z.object({ email: z.string().optional() });
export const memberRoleQuery = z.object({ userId: id.optional(), organizationId: id.optional(), organizationSlug: z.string().max(200).optional() });
export const listMembersQuery = z.object({
  limit: z.coerce.number().int().min(0).optional(),
  offset: z.coerce.number().int().min(0).optional(),
  sortBy: z.string().optional(),
  sortDirection: z.enum(['asc', 'desc']).optional(),
  filterField: z.string().optional(),
  filterValue: z.union([z.string(), z.array(z.string())]).optional(),
  filterOperator: z.enum(['eq', 'ne', 'in', 'not_in']).optional(),
  organizationId: id.optional(),
  organizationSlug: z.string().max(200).optional(),
});

/** A query string parsed like better-call does: 400 VALIDATION_ERROR "[query.field] reason". */
export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.output<S> {
  const result = schema.safeParse(query ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw AuthErrors.validation(`[query.${issue.path.join('.')}] ${issue.message}`);
}

export type CreateOrganizationInput = z.output<typeof createOrganizationBody>;
export type UpdateOrganizationInput = z.output<typeof updateOrganizationBody>;
export type SetActiveInput = z.output<typeof setActiveBody>;
export type InviteInput = z.output<typeof inviteBody>;
export type ListMembersInput = z.output<typeof listMembersQuery>;
export type HasPermissionInput = z.output<typeof hasPermissionBody>;
