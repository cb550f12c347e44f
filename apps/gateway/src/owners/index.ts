// Public face of owners/: what other folders of the gateway use (eslint `slipway/feature-folders`).
// The owners' identity layer: accounts (sign-up, the dashboard's sign-in and sign-out, sessions,
// passwords, sign-in limits) and the guards every owners'-API route uses (session or bearer
// credential, CSRF, `:appId` ownership).
export { CurrentApplication, CurrentCaller, CurrentOwner } from './access/current-owner.decorator.js';
export { OwnerAccessModule } from './access/owner-access.module.js';
export { OwnedApplicationRoute, OwnerRoute, SessionRoute } from './access/owner-guards.js';
export type { OwnedApplication, OwnerPrincipal, OwnersApiCaller } from './access/owner-principal.js';
export { OWNERS_API_ACCESS } from './access/owners-api-access.js';
export type { OwnersApiAccess } from './access/owners-api-access.js';
export { OwnerAuthModule } from './accounts/owner-auth.module.js';
