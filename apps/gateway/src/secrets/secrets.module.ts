import { Module } from '@nestjs/common';
import { AuthModule } from '../api-auth/index.js';
import { OwnerAccessModule } from '../owners/index.js';
import { OwnerSecretsController } from './owner-secrets.controller.js';
import { SecretsController } from './secrets.controller.js';
import { SecretsService } from './secrets.service.js';

/** Secrets: `PUT/GET /api/v1/secrets` and the owners' API's one-name-at-a-time view (dashboard and CLI), over one SecretsService. */
@Module({ imports: [AuthModule, OwnerAccessModule], controllers: [SecretsController, OwnerSecretsController], providers: [SecretsService] })
export class SecretsModule {}
