// Every query of an application's `service_auth` schema (its own database), one store per table
// group. Apps call these; lint rule `slipway/service-auth-only` keeps the SQL here.
export * from './service-auth-db.js';
export * from './user-admin.js';
export * from './users.store.js';
export * from './sessions.store.js';
export * from './verifications.store.js';
export * from './admin.store.js';
export * from './organization.store.js';
export * from './passkey.store.js';
export * from './two-factor.store.js';
export * from './email-otp.store.js';
export * from './mailbox-owner.store.js';
