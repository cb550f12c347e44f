// Public face of owners-api/: what other folders of the gateway use (eslint `slipway/feature-folders`).
// The owners' API's OpenAPI document and the decorators that describe a route in it.
export { OwnersApi } from './owners-api-doc.js';
export { Releases, ReleaseSwitch, RollbackRequest } from './owners-api-schemas.js';
export { OwnersApiModule } from './owners-api.module.js';
