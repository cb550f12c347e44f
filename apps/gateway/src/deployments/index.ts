// Public face of deployments/: what other folders of the gateway use (eslint `slipway/feature-folders`).
// Uploads, deployments, releases and previews.
export { DeploymentsModule } from './deployments.module.js';
