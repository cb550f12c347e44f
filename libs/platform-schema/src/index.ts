export * from './database-url.js';
export * from './migrate.js';
export * from './prisma.js';
export { Prisma } from './generated/prisma/client.js';
export type * from './generated/prisma/client.js';
export { DeploymentStatus, EmailStatus, Plan, TrustedOriginSource } from './generated/prisma/enums.js';
