import { Module } from '@nestjs/common';
import { SecretsModule } from '../../secrets/secrets.module.js';
import { DashboardAccessModule } from '../common/dashboard-access.module.js';
import { DashboardSecretsController } from './secrets.controller.js';

@Module({ imports: [DashboardAccessModule, SecretsModule], controllers: [DashboardSecretsController] })
export class DashboardSecretsModule {}
