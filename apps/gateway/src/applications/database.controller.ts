import { Controller, Get, HttpCode, Post } from '@nestjs/common';
import { CurrentApplication, CurrentOwner, type OwnedApplication, OwnedApplicationRoute, type OwnerPrincipal } from '../owners/index.js';
import { DatabaseService } from './database.service.js';

@Controller('dashboard/api/applications/:appId/database')
@OwnedApplicationRoute()
export class DatabaseController {
  constructor(private readonly databases: DatabaseService) {}

  @Get()
  get(@CurrentOwner() owner: OwnerPrincipal, @CurrentApplication() app: OwnedApplication) {
    return this.databases.get(owner, app);
  }

  /** A POST (CSRF-checked, never cached or prefetched) because the answer holds a password. */
  @Post('connection-string')
  @HttpCode(200)
  reveal(@CurrentApplication() app: OwnedApplication) {
    return this.databases.connectionString(app);
  }
}
