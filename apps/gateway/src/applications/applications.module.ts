import { Module } from '@nestjs/common';
import { OwnerAccessModule } from '../owners/index.js';
import { ApplicationsController } from './applications.controller.js';
import { ApplicationsService } from './applications.service.js';
import { DatabaseBackupsController } from './database-backups.controller.js';
import { DatabaseBackupsService } from './database-backups.service.js';
import { DatabaseController } from './database.controller.js';
import { DatabaseService } from './database.service.js';

/** An owner's applications (list, create, details) and each application's Postgres database, its backups and restores. */
@Module({
  imports: [OwnerAccessModule],
  controllers: [ApplicationsController, DatabaseController, DatabaseBackupsController],
  providers: [ApplicationsService, DatabaseService, DatabaseBackupsService],
})
export class ApplicationsModule {}
