// Public face of applications/: what other folders of the gateway use (eslint `slipway/feature-folders`).
// An owner's applications and their Postgres database.
export { applicationUrl } from './application-address.js';
export { ApplicationsModule } from './applications.module.js';
export { applicationOrPreview } from './preview-target.js';
