// Public face of api-auth/: what other folders of the gateway use (eslint `slipway/feature-folders`).
// How a presented bearer credential is checked: project API keys (`ApiKeyGuard`, the deployment API's
// guard) and owners' personal access tokens. Managing them is credentials/'s.
export { AuthModule } from './api-auth.module.js';
export { ApiKeysService, unauthorized } from './api-key-verifier.service.js';
export { ApiKeyGuard } from './api-key.guard.js';
export type { ApiPrincipal } from './api-principal.js';
export { CurrentApplication } from './current-application.decorator.js';
export { PersonalAccessTokensService } from './personal-access-tokens.service.js';
