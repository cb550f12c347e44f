// Public face of domains/: what other folders of the gateway use (eslint `slipway/feature-folders`).
// Custom domains.
export { DomainsModule } from './domains.module.js';
