import { Body, Controller, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import { CurrentApplication, CurrentOwner } from '../dashboard/common/current-owner.decorator.js';
import { OwnedApplicationRoute } from '../dashboard/common/owner-guards.js';
import type { OwnedApplication, OwnerPrincipal } from '../dashboard/common/owner-principal.js';
import { DashboardSignInService } from './dashboard-sign-in.service.js';

@Controller('dashboard/api/applications/:appId/sign-in')
@OwnedApplicationRoute()
export class DashboardSignInController {
  constructor(private readonly signIn: DashboardSignInService) {}

  @Get()
  get(@CurrentOwner() owner: OwnerPrincipal, @CurrentApplication() app: OwnedApplication) {
    return this.signIn.get(owner, app);
  }

  @Post()
  @HttpCode(200)
  enable(@CurrentOwner() owner: OwnerPrincipal, @CurrentApplication() app: OwnedApplication) {
    return this.signIn.enable(owner, app);
  }

  /** A POST (CSRF-checked, never cached or prefetched) because the answer holds the cookie secret. */
  @Post('env')
  @HttpCode(200)
  env(@CurrentOwner() owner: OwnerPrincipal, @CurrentApplication() app: OwnedApplication) {
    return this.signIn.env(owner, app);
  }

  @Patch('settings')
  settings(@CurrentOwner() owner: OwnerPrincipal, @CurrentApplication() app: OwnedApplication, @Body() body: unknown) {
    return this.signIn.updateSettings(owner, app, body);
  }

  @Get('users')
  users(@CurrentApplication() app: OwnedApplication, @Query('search') search: unknown) {
    return this.signIn.users(app, search);
  }

  @Get('emails')
  emails(@CurrentApplication() app: OwnedApplication) {
    return this.signIn.emails(app);
  }
}
