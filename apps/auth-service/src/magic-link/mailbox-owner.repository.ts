import { Injectable } from '@nestjs/common';
import { MailboxOwnerStore } from '@slipway/sign-in-core';
import type { TenantDb } from '../tenants/index.js';

/** Mailbox ownership in the tenant's `service_auth`: the SQL is @slipway/sign-in-core's `MailboxOwnerStore`, here bound to a tenant's handle (`TenantDb`). */
@Injectable()
export class MailboxOwnerRepository extends MailboxOwnerStore<TenantDb> {}
