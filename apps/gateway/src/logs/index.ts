// Public face of logs/: what other folders of the gateway use (eslint `slipway/feature-folders`).
// Runtime logs and live build output.
export { LogsModule } from './logs.module.js';
