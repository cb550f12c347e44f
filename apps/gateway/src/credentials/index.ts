// Public face of credentials/: what other folders of the gateway use (eslint `slipway/feature-folders`).
// API keys and personal access tokens as the owners' API manages them (checking one is api-auth/'s).
export { CredentialsModule } from './credentials.module.js';
