import { Injectable } from '@nestjs/common';
import { PasskeyStore, type PasskeyRow } from '@slipway/sign-in-core';
import type { TenantDb } from '../tenants/index.js';

/** Passkeys in the tenant's `service_auth`: the SQL is @slipway/sign-in-core's `PasskeyStore`, here bound to a tenant's handle (`TenantDb`). */
@Injectable()
export class PasskeyRepository extends PasskeyStore<TenantDb> {}
export { type PasskeyRow } from '@slipway/sign-in-core';

/** Better Auth's passkey object (the adapter's field names), as list-user-passkeys and verify-registration answer it. */
export function passkeyView(row: PasskeyRow) {
  return {
    id: row.id,
    name: row.name ?? undefined,
    publicKey: row.public_key,
    userId: row.user_id,
    credentialID: row.credential_id,
    counter: row.counter,
    deviceType: row.device_type,
    backedUp: row.backed_up,
    transports: row.transports ?? undefined,
    createdAt: row.created_at,
    aaguid: row.aaguid ?? undefined,
  };
}
