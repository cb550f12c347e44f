import { Module } from '@nestjs/common';
import { DashboardAccessModule } from '../common/dashboard-access.module.js';
import { ApplicationsController } from './applications.controller.js';
import { ApplicationsService } from './applications.service.js';

@Module({ imports: [DashboardAccessModule], controllers: [ApplicationsController], providers: [ApplicationsService] })
export class ApplicationsModule {}
