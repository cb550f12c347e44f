import { Injectable } from '@nestjs/common';
import { OrganizationStore } from '@slipway/sign-in-core';
import type { TenantDb } from '../tenants/index.js';

/** Organizations, members and invitations in the tenant's `service_auth`: the SQL is @slipway/sign-in-core's `OrganizationStore`, here bound to a tenant's handle (`TenantDb`). */
@Injectable()
export class OrganizationRepository extends OrganizationStore<TenantDb> {}
export {
  type OrganizationRow,
  type MemberRow,
  type MemberWithUser,
  type InvitationStatus,
  type InvitationRow,
  MEMBER_FIELDS,
  type MemberListQuery,
} from '@slipway/sign-in-core';
