export * from './provision.js';
export * from './signing-keys.js';
export * from './tenant-database.js';
export * from './trusted-origins.js';
export * from './runtime-env.js';
export * from './sign-in-variables.js';
export * from './pooler/scram-secret.js';
export * from './pooler/app-database-pooler.js';
