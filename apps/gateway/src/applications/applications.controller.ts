import { Body, Controller, Get, Post } from '@nestjs/common';
import { CurrentApplication, CurrentOwner } from '../dashboard/common/current-owner.decorator.js';
import { OwnedApplicationRoute, OwnerRoute } from '../dashboard/common/owner-guards.js';
import type { OwnedApplication, OwnerPrincipal } from '../dashboard/common/owner-principal.js';
import { ApplicationsService } from './applications.service.js';

@Controller('dashboard/api/applications')
export class ApplicationsController {
  constructor(private readonly applications: ApplicationsService) {}

  @Get()
  @OwnerRoute()
  list(@CurrentOwner() owner: OwnerPrincipal) {
    return this.applications.list(owner.id);
  }

  @Post()
  @OwnerRoute()
  create(@CurrentOwner() owner: OwnerPrincipal, @Body() body: unknown) {
    return this.applications.create(owner.id, body);
  }

  @Get(':appId')
  @OwnedApplicationRoute()
  get(@CurrentOwner() owner: OwnerPrincipal, @CurrentApplication() app: OwnedApplication) {
    return this.applications.get(owner.id, app);
  }
}
