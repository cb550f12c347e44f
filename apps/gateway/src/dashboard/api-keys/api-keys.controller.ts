import { Body, Controller, Delete, Get, Param, Patch, Post } from '@nestjs/common';
import { CurrentApplication } from '../common/current-owner.decorator.js';
import { OwnedApplicationRoute } from '../common/owner-guards.js';
import type { OwnedApplication } from '../common/owner-principal.js';
import { DashboardApiKeysService } from './api-keys.service.js';

@Controller('dashboard/api/applications/:appId/api-keys')
@OwnedApplicationRoute()
export class DashboardApiKeysController {
  constructor(private readonly keys: DashboardApiKeysService) {}

  @Get()
  list(@CurrentApplication() app: OwnedApplication) {
    return this.keys.list(app.id);
  }

  @Post()
  create(@CurrentApplication() app: OwnedApplication, @Body() body: unknown) {
    return this.keys.create(app.id, body);
  }

  @Patch(':keyId')
  rename(@CurrentApplication() app: OwnedApplication, @Param('keyId') keyId: string, @Body() body: unknown) {
    return this.keys.rename(app.id, keyId, body);
  }

  @Post(':keyId/rotate')
  rotate(@CurrentApplication() app: OwnedApplication, @Param('keyId') keyId: string) {
    return this.keys.rotate(app.id, keyId);
  }

  @Delete(':keyId')
  revoke(@CurrentApplication() app: OwnedApplication, @Param('keyId') keyId: string) {
    return this.keys.revoke(app.id, keyId);
  }
}
