import { Module } from '@nestjs/common';
import { DashboardAccessModule } from '../dashboard/common/dashboard-access.module.js';
import { ApplicationsController } from './applications.controller.js';
import { ApplicationsService } from './applications.service.js';
import { DatabaseController } from './database.controller.js';
import { DatabaseService } from './database.service.js';

/** An owner's applications (list, create, details) and each application's Postgres database. */
@Module({ imports: [DashboardAccessModule], controllers: [ApplicationsController, DatabaseController], providers: [ApplicationsService, DatabaseService] })
export class ApplicationsModule {}
