export { pluginEnabled, requirePlugin, type SignInPlugins, type SignInSettings, type Tenant, type TenantDb } from './tenant.js';
export { TenantsModule } from './tenants.module.js';
export { TenantsService } from './tenants.service.js';
export { TENANT_CONNECTION_BUDGET, type TenantConnectionBudget } from './tenant-connection-budget.js';
