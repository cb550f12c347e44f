// Public face of sign-in-services/: what other folders of the gateway use (eslint `slipway/feature-folders`).
// An application's sign-in service (for its own users): the `/api/v1/auth` platform calls, the
// owners' API tab (users, settings, outbox), and the tenant-changed notice to auth-service.
export { SignInServicesModule } from './sign-in-services.module.js';
export { TenantChangedPublisher } from './tenant-changed.publisher.js';
