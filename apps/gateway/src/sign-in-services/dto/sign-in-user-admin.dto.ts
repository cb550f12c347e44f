import { ADMIN_DEFAULT_ROLES } from '@slipway/sign-in-core';
import { z } from 'zod';

/** Ban one of the application's users: Better Auth's admin plugin's fields (`banExpiresIn` in seconds; none: for ever). */
export const BanUserBody = z
  .object({
    banReason: z.string().trim().max(1000).optional(),
    banExpiresIn: z
      .number()
      .int()
      .positive()
      .max(100 * 365 * 24 * 3600)
      .optional(),
  })
  .strict();

/** Set a user's role: one of Better Auth's default roles, or a list of them. */
export const SetUserRoleBody = z.object({ role: z.union([z.enum(ADMIN_DEFAULT_ROLES), z.array(z.enum(ADMIN_DEFAULT_ROLES)).min(1).max(2)]) }).strict();
