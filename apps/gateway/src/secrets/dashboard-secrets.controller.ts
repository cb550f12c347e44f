import { Body, Controller, Delete, Get, Param, Put } from '@nestjs/common';
import { asApplicationId } from '@slipway/platform-data';
import { SecretsService } from './secrets.service.js';
import { CurrentApplication } from '../dashboard/common/current-owner.decorator.js';
import { OwnedApplicationRoute } from '../dashboard/common/owner-guards.js';
import type { OwnedApplication } from '../dashboard/common/owner-principal.js';

/**
 * The same SecretsService as `PUT/GET /api/v1/secrets` (one validation, one encryption path),
 * addressed one name at a time. Values are write-only here too.
 */
@Controller('dashboard/api/applications/:appId/secrets')
@OwnedApplicationRoute()
export class DashboardSecretsController {
  constructor(private readonly secrets: SecretsService) {}

  @Get()
  list(@CurrentApplication() app: OwnedApplication) {
    return this.secrets.list(asApplicationId(app.id));
  }

  @Put()
  put(@CurrentApplication() app: OwnedApplication, @Body() body: unknown) {
    return this.secrets.put(asApplicationId(app.id), body);
  }

  @Delete(':name')
  remove(@CurrentApplication() app: OwnedApplication, @Param('name') name: string) {
    return this.secrets.put(asApplicationId(app.id), { secrets: { [name]: null } });
  }
}
