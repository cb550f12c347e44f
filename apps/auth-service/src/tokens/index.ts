export { TokensModule } from './tokens.module.js';
export { JWT_REUSE_MS, TokensService, type OrganizationClaims } from './tokens.service.js';
