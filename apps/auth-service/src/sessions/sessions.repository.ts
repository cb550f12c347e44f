import { Injectable } from '@nestjs/common';
import { SessionsStore } from '@slipway/sign-in-core';
import type { TenantDb } from '../tenants/index.js';

/** Sessions in the tenant's `service_auth`: the SQL is @slipway/sign-in-core's `SessionsStore`, here bound to a tenant's handle (`TenantDb`). */
@Injectable()
export class SessionsRepository extends SessionsStore<TenantDb> {}
export { type SessionRow } from '@slipway/sign-in-core';
