// Public face of common/: what other folders of the gateway use (eslint `slipway/feature-folders`).
// Cross-cutting pieces: config module, blob store, routes publisher, body parsing, ids.
export { BLOB_STORE } from './blob-store.provider.js';
export { parseBody } from './body.js';
export { CommonModule } from './common.module.js';
export { GatewayConfigModule } from './gateway-config.module.js';
export { isUuid } from './ids.js';
export { JsonBodyGuard } from './json-body.guard.js';
export { RoutesPublisher } from './routes.publisher.js';
