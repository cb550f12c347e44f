import { Injectable } from '@nestjs/common';
import { UsersStore, type UserRow } from '@slipway/sign-in-core';
import type { TenantDb } from '../tenants/index.js';

/** Users and their accounts in the tenant's `service_auth`: the SQL is @slipway/sign-in-core's `UsersStore`, here bound to a tenant's handle (`TenantDb`). */
@Injectable()
export class UsersRepository extends UsersStore<TenantDb> {}
export { type UserRow, USER_COLUMNS, userColumns, type SocialProfile } from '@slipway/sign-in-core';

/** The user as Better Auth's client expects it (dates become ISO strings in JSON). */
export function userView(user: UserRow) {
  return {
    id: user.id,
    name: user.name,
    email: user.email,
    emailVerified: user.email_verified,
    image: user.image,
    createdAt: user.created_at,
    updatedAt: user.updated_at,
    // The plugins' fields (two-factor, admin), present whether or not the plugin is on, as columns are.
    twoFactorEnabled: user.two_factor_enabled,
    role: user.role,
    banned: user.banned,
    banReason: user.ban_reason,
    banExpires: user.ban_expires,
  };
}
