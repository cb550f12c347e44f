/**
 * The platform Prisma client, still injected by `SignInOrigins` alone until its query moves into
 * libs/platform-data (issue 21); deployment rows are `DeploymentsRepository`'s (@slipway/platform-data).
 */
export const PRISMA = Symbol('PRISMA');
