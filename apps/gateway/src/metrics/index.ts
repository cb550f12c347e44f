// Public face of metrics/: what other folders of the gateway use (eslint `slipway/feature-folders`).
// Per-application metrics.
export { MetricsModule } from './metrics.module.js';
