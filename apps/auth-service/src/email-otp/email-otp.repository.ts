import { Injectable } from '@nestjs/common';
import { EmailOtpStore } from '@slipway/sign-in-core';
import type { TenantDb } from '../tenants/index.js';

/** Emailed one-time codes in the tenant's `service_auth`: the SQL is @slipway/sign-in-core's `EmailOtpStore`, here bound to a tenant's handle (`TenantDb`). */
@Injectable()
export class EmailOtpRepository extends EmailOtpStore<TenantDb> {}
export { type CodeCheck } from '@slipway/sign-in-core';
