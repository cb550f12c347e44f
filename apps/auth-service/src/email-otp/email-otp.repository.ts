import { Injectable } from '@nestjs/common';
import { EmailOtpStore } from '@slipway/auth-core';
import type { TenantDb } from '../tenants/index.js';

/** Emailed one-time codes in the tenant's `service_auth`: the SQL is @slipway/auth-core's `EmailOtpStore`, here bound to a tenant's handle (`TenantDb`). */
@Injectable()
export class EmailOtpRepository extends EmailOtpStore<TenantDb> {}
export { type CodeCheck } from '@slipway/auth-core';
