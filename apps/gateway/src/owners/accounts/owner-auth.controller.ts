import { Body, Controller, Get, HttpCode, Inject, Post, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { GATEWAY_CONFIG, type GatewayConfig } from '../../config.js';
import { CsrfGuard } from '../access/csrf.guard.js';
import { CurrentOwner } from '../access/current-owner.decorator.js';
import { OwnerRoute, SessionRoute } from '../access/owner-guards.js';
import type { OwnerPrincipal } from '../access/owner-principal.js';
import { clearSessionCookie, writeSessionCookie } from '../access/session-cookie.js';
import { LocalAuthGuard } from './local-auth.guard.js';
import { OwnerAuthService } from './owner-auth.service.js';
import { OwnerSessionsService } from './owner-sessions.service.js';

@Controller('dashboard/api/session')
export class OwnerAuthController {
  private readonly secureCookie: boolean;

  constructor(
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    private readonly auth: OwnerAuthService,
    private readonly sessions: OwnerSessionsService,
  ) {
    this.secureCookie = config.PUBLIC_URL.startsWith('https:');
  }

  @Post('sign-up')
  @UseGuards(CsrfGuard)
  async signUp(@Body() body: unknown, @Res({ passthrough: true }) response: Response) {
    return this.signedIn(await this.auth.signUp(body), response);
  }

  @Post('sign-in')
  @HttpCode(200)
  @UseGuards(CsrfGuard, LocalAuthGuard)
  signIn(@CurrentOwner() owner: OwnerPrincipal, @Res({ passthrough: true }) response: Response) {
    return this.signedIn(owner, response);
  }

  @Post('sign-out')
  @HttpCode(200)
  @SessionRoute()
  async signOut(@CurrentOwner() owner: OwnerPrincipal, @Res({ passthrough: true }) response: Response) {
    await this.sessions.end(owner);
    clearSessionCookie(response, this.secureCookie);
    return { signedOut: true };
  }

  @Get()
  @OwnerRoute()
  me(@CurrentOwner() owner: OwnerPrincipal) {
    return this.auth.view(owner);
  }

  /** Cookies are the transport's business, so the controller writes it; the session row is the service's. */
  private async signedIn(owner: Omit<OwnerPrincipal, 'sessionId'>, response: Response) {
    const session = await this.sessions.start(owner.id);
    writeSessionCookie(response, session.token, session.expiresAt, this.secureCookie);
    return this.auth.view(owner);
  }
}
