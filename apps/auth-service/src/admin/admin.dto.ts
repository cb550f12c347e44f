import { z } from '@slipway/config';

// Bodies and queries as Better Auth's admin plugin validates them (z.coerce.string for ids).
const userId = z.coerce.string().min(1).max(200);
const role = z.union([z.string().max(200), z.array(z.string().max(200)).max(20)]);

export const userIdBody = z.object({ userId });
export const getUserQuery = z.object({ id: z.string().min(1).max(200) });
export const setRoleBody = z.object({ userId, role });
export const banBody = z.object({
  userId,
  banReason: z.string().max(1000).optional(),
  banExpiresIn: z
    .number()
    .positive()
    .max(100 * 365 * 24 * 3600)
    .optional(),
});
export const revokeSessionBody = z.object({ sessionToken: z.string().min(1).max(200) });
export const setPasswordBody = z.object({ userId, newPassword: z.string().min(1, 'newPassword cannot be empty') });
export const createUserBody = z.object({
  email: z.string().max(320),
  password: z.string().optional(),
  name: z.string().max(200),
  role: role.optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});
export const updateUserBody = z.object({ userId, data: z.record(z.string(), z.unknown()) });
const permissions = z.record(z.string(), z.array(z.string()));
export const hasPermissionBody = z.object({
  userId: z.coerce.string().optional(),
  role: z.string().optional(),
  permission: permissions.optional(),
  permissions: permissions.optional(),
});

const whereOperator = z.enum(['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'not_in', 'contains', 'starts_with', 'ends_with']);
const scalar = z.union([z.string(), z.number(), z.boolean()]);
export const listUsersQuery = z.object({
  searchValue: z.string().max(200).optional(),
  searchField: z.enum(['email', 'name']).optional(),
  searchOperator: z.enum(['contains', 'starts_with', 'ends_with']).optional(),
  limit: z.union([z.string(), z.number()]).optional(),
  offset: z.union([z.string(), z.number()]).optional(),
  sortBy: z.string().max(100).optional(),
  sortDirection: z.enum(['asc', 'desc']).optional(),
  filterField: z.string().max(100).optional(),
  filterValue: z.union([scalar, z.array(z.union([z.string(), z.number()])).max(100)]).optional(),
  filterOperator: whereOperator.optional(),
});
export type ListUsersQuery = z.output<typeof listUsersQuery>;
