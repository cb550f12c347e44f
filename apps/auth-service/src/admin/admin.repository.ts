import { Injectable } from '@nestjs/common';
import { AdminStore } from '@slipway/auth-core';
import type { TenantDb } from '../tenants/index.js';

/** User administration in the tenant's `service_auth`: the SQL is @slipway/auth-core's `AdminStore`, here bound to a tenant's handle (`TenantDb`). */
@Injectable()
export class AdminRepository extends AdminStore<TenantDb> {}
export { type WhereOperator, type UserWhere, type UserListQuery, UnknownFieldError } from '@slipway/auth-core';
