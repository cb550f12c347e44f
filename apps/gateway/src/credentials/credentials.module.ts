import { Module } from '@nestjs/common';
import { CredentialsRepository, asApplicationId, asOwnerId } from '@slipway/platform-data';
import { OwnerAccessModule } from '../owners/index.js';
import { CredentialLifecycle } from './credential-lifecycle.js';
import { API_KEY_LIFECYCLE, ApiKeysController, TOKEN_LIFECYCLE, TokensController } from './credentials.controllers.js';

/**
 * API keys and personal access tokens as the dashboard manages them: one lifecycle, two tables.
 * How a presented key or token is checked lives in api-auth/ (and sign-in-services/owner-token-or-api-key.guard.ts).
 * The routes' guards checked the owner owns the application (or is the owner) before an id becomes a scope.
 */
@Module({
  imports: [OwnerAccessModule],
  controllers: [ApiKeysController, TokensController],
  providers: [
    {
      provide: API_KEY_LIFECYCLE,
      inject: [CredentialsRepository],
      useFactory: (credentials: CredentialsRepository) =>
        new CredentialLifecycle(
          { store: credentials.apiKeys, scope: asApplicationId },
          { issue: 'api_key', secretField: 'key', listField: 'keys', notFound: 'No such live key for this application.' },
        ),
    },
    {
      provide: TOKEN_LIFECYCLE,
      inject: [CredentialsRepository],
      useFactory: (credentials: CredentialsRepository) =>
        new CredentialLifecycle(
          { store: credentials.personalAccessTokens, scope: asOwnerId },
          { issue: 'personal_access_token', secretField: 'token', listField: 'tokens', notFound: 'No such live token.' },
        ),
    },
  ],
})
export class CredentialsModule {}
