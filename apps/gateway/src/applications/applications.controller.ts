import { Body, Controller, Get, Post } from '@nestjs/common';
import {
  CurrentApplication,
  CurrentCaller,
  CurrentOwner,
  type OwnedApplication,
  OwnedApplicationRoute,
  type OwnerPrincipal,
  OwnerRoute,
  type OwnersApiCaller,
} from '../owners/index.js';
import { ApplicationsService } from './applications.service.js';

@Controller('dashboard/api/applications')
export class ApplicationsController {
  constructor(private readonly applications: ApplicationsService) {}

  /** The owner's applications; for a project API key, its one application (how the CLI learns its id). */
  @Get()
  @OwnerRoute({ projectKeys: 'own-application' })
  list(@CurrentOwner() owner: OwnerPrincipal, @CurrentCaller() caller: OwnersApiCaller) {
    return this.applications.list(owner.id, caller.kind === 'project-key' ? caller.applicationId : undefined);
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
