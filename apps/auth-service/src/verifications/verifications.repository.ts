import { Injectable } from '@nestjs/common';
import { VerificationsStore } from '@slipway/sign-in-core';
import type { TenantDb } from '../tenants/index.js';

/** One-time tokens in the tenant's `service_auth`: the SQL is @slipway/sign-in-core's `VerificationsStore`, here bound to a tenant's handle (`TenantDb`). */
@Injectable()
export class VerificationsRepository extends VerificationsStore<TenantDb> {}
