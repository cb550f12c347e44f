export { TokensModule } from './tokens.module.js';
export { JWT_REUSE_MS, TokensService } from './tokens.service.js';
