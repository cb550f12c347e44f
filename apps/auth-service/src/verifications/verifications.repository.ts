import { Injectable } from '@nestjs/common';
import { VerificationsStore } from '@slipway/auth-core';
import type { TenantDb } from '../tenants/index.js';

/** One-time tokens in the tenant's `service_auth`: the SQL is @slipway/auth-core's `VerificationsStore`, here bound to a tenant's handle (`TenantDb`). */
@Injectable()
export class VerificationsRepository extends VerificationsStore<TenantDb> {}
