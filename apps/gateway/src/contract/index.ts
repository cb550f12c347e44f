// Public face of contract/: what other folders of the gateway use (eslint `slipway/feature-folders`).
// The zod schemas and endpoint catalogue behind `GET /api/v1`.
export { DeploymentTask, ErrorBody, PutSecretsBody, TaskId } from './api-schemas.js';
export { ContractModule } from './contract.module.js';
