import { Module } from '@nestjs/common';
import { DashboardAccessModule } from '../common/dashboard-access.module.js';
import { DatabaseController } from './database.controller.js';
import { DatabaseRepository } from './database.repository.js';
import { DatabaseService } from './database.service.js';

@Module({ imports: [DashboardAccessModule], controllers: [DatabaseController], providers: [DatabaseRepository, DatabaseService] })
export class DashboardDatabaseModule {}
