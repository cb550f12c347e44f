import { Module } from '@nestjs/common';
import { DashboardAccessModule } from '../common/dashboard-access.module.js';
import { DashboardApiKeysController } from './api-keys.controller.js';
import { DashboardApiKeysRepository } from './api-keys.repository.js';
import { DashboardApiKeysService } from './api-keys.service.js';

@Module({ imports: [DashboardAccessModule], controllers: [DashboardApiKeysController], providers: [DashboardApiKeysRepository, DashboardApiKeysService] })
export class DashboardApiKeysModule {}
