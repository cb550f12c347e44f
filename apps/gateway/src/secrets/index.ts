// Public face of secrets/: what other folders of the gateway use (eslint `slipway/feature-folders`).
// An application's secrets.
export { SecretsModule } from './secrets.module.js';
