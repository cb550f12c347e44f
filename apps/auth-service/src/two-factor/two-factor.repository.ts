import { Injectable } from '@nestjs/common';
import { TwoFactorStore } from '@slipway/sign-in-core';
import type { TenantDb } from '../tenants/index.js';

/** Second factors in the tenant's `service_auth`: the SQL is @slipway/sign-in-core's `TwoFactorStore`, here bound to a tenant's handle (`TenantDb`). */
@Injectable()
export class TwoFactorRepository extends TwoFactorStore<TenantDb> {}
export { type TwoFactorRow } from '@slipway/sign-in-core';
