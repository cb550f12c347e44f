import { Injectable } from '@nestjs/common';
import { AdminStore } from '@slipway/sign-in-core';
import type { TenantDb } from '../tenants/index.js';

/** User administration in the tenant's `service_auth`: the SQL is @slipway/sign-in-core's `AdminStore`, here bound to a tenant's handle (`TenantDb`). */
@Injectable()
export class AdminRepository extends AdminStore<TenantDb> {}
export { type WhereOperator, type UserWhere, type UserListQuery, UnknownFieldError } from '@slipway/sign-in-core';
