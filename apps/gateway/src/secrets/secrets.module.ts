import { Module } from '@nestjs/common';
import { AuthModule } from '../api-auth/index.js';
import { DashboardAccessModule } from '../owners/index.js';
import { DashboardSecretsController } from './dashboard-secrets.controller.js';
import { SecretsController } from './secrets.controller.js';
import { SecretsService } from './secrets.service.js';

/** Secrets: `PUT/GET /api/v1/secrets` and the dashboard's one-name-at-a-time view, over one SecretsService. */
@Module({ imports: [AuthModule, DashboardAccessModule], controllers: [SecretsController, DashboardSecretsController], providers: [SecretsService] })
export class SecretsModule {}
