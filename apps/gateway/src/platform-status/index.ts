// Public face of platform-status/: what other folders of the gateway use (eslint `slipway/feature-folders`).
// The dashboard's platform status banner.
export { PlatformStatusModule } from './platform-status.module.js';
