// Public face of rate-limit/: what other folders of the gateway use (eslint `slipway/feature-folders`).
// Bounds on concurrent work (the password-hashing gate).
export { ConcurrencyGate } from './concurrency-gate.js';
