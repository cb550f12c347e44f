import { Module } from '@nestjs/common';
import { DashboardApiKeysModule } from './api-keys/api-keys.module.js';
import { ApplicationsModule } from './applications/applications.module.js';
import { DashboardDatabaseModule } from './database/database.module.js';
import { DashboardDeploymentsModule } from './deployments/dashboard-deployments.module.js';
import { DomainsModule } from './domains/domains.module.js';
import { OwnerAuthModule } from './owner-auth/owner-auth.module.js';
import { PlatformStatusModule } from './platform-status/platform-status.module.js';
import { DashboardSecretsModule } from './secrets/secrets.module.js';
import { DashboardSignInModule } from './sign-in/dashboard-sign-in.module.js';
import { TokensModule } from './tokens/tokens.module.js';

/** The dashboard's API under /dashboard/api: owner session cookie, CSRF-checked writes. */
@Module({
  imports: [OwnerAuthModule, ApplicationsModule, DashboardApiKeysModule, TokensModule, DomainsModule, DashboardSecretsModule, DashboardDeploymentsModule, DashboardDatabaseModule, DashboardSignInModule, PlatformStatusModule],
})
export class DashboardModule {}
