import { Body, Controller, Get, HttpCode, Inject, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { clientAddress } from '@slipway/service-kit';
import type { Request } from 'express';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';
import { CurrentApplication, CurrentOwner, type OwnedApplication, OwnedApplicationRoute, type OwnerPrincipal } from '../owners/index.js';
import { OwnerSignInServicesService } from './owner-sign-in-services.service.js';

@Controller('dashboard/api/applications/:appId/sign-in')
@OwnedApplicationRoute()
export class OwnerSignInServicesController {
  constructor(
    private readonly signIn: OwnerSignInServicesService,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

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

  /** The owner's user administration: `ban` {banReason?, banExpiresIn?}, `unban`, `revoke-sessions`, `role` {role}. */
  @Post('users/:userId/:action')
  @HttpCode(200)
  administer(
    @CurrentOwner() owner: OwnerPrincipal,
    @CurrentApplication() app: OwnedApplication,
    @Param('userId') userId: string,
    @Param('action') action: string,
    @Body() body: unknown,
    @Req() req: Request,
  ) {
    return this.signIn.administer(
      owner,
      app,
      userId,
      action,
      body,
      clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'], this.config.GATEWAY_TRUSTED_PROXIES),
    );
  }

  @Get('emails')
  emails(@CurrentApplication() app: OwnedApplication) {
    return this.signIn.emails(app);
  }
}
