import { Module } from '@nestjs/common';
import { PrismaService } from '../common/prisma.service.js';
import { DashboardAccessModule } from '../dashboard/common/dashboard-access.module.js';
import { CredentialLifecycle } from './credential-lifecycle.js';
import { API_KEYS, CredentialStore, PERSONAL_ACCESS_TOKENS } from './credential-store.js';
import { API_KEY_LIFECYCLE, ApiKeysController, TOKEN_LIFECYCLE, TokensController } from './credentials.controllers.js';

/**
 * API keys and personal access tokens as the dashboard manages them: one lifecycle, two tables.
 * How a presented key or token is checked lives beside it (api-auth.module.ts, sign-in-token.guard.ts).
 */
@Module({
  imports: [DashboardAccessModule],
  controllers: [ApiKeysController, TokensController],
  providers: [
    {
      provide: API_KEY_LIFECYCLE,
      inject: [PrismaService],
      useFactory: (prisma: PrismaService) => new CredentialLifecycle(new CredentialStore(prisma, API_KEYS), { issue: 'api_key', secretField: 'key', listField: 'keys', notFound: 'No such live key for this application.' }),
    },
    {
      provide: TOKEN_LIFECYCLE,
      inject: [PrismaService],
      useFactory: (prisma: PrismaService) => new CredentialLifecycle(new CredentialStore(prisma, PERSONAL_ACCESS_TOKENS), { issue: 'personal_access_token', secretField: 'token', listField: 'tokens', notFound: 'No such live token.' }),
    },
  ],
})
export class CredentialsModule {}
