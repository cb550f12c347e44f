import { Body, Controller, Get, Param, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import type { Response } from 'express';
import { AuthErrorFilter, parseBody, reply } from '../common/index.js';
import { requestMeta, type AuthRequest } from '../pipeline/index.js';
import { oauth2LinkBody, oauth2SignInBody } from './dto/generic-oauth.dto.js';
import { GenericOAuthService } from './generic-oauth.service.js';

/** genericOAuth's own routes (Better Auth ≤ 1.6's genericOAuthClient); 1.7's client uses `/sign-in/social` and `/callback/:id` (social/). */
@Controller('a/:slug')
@UseFilters(AuthErrorFilter)
export class GenericOAuthController {
  constructor(private readonly oidc: GenericOAuthService) {}

  @Post('sign-in/oauth2')
  async signIn(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.oidc.signIn(req.tenant, parseBody(oauth2SignInBody, body)));
  }

  @Get('oauth2/callback/:providerId')
  async callback(@Req() req: AuthRequest, @Res() res: Response, @Param('providerId') providerId: string, @Query() query: Record<string, string>) {
    return reply(res, await this.oidc.callback(req.tenant, providerId, query, requestMeta(req)));
  }

  @Post('oauth2/link')
  async link(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.oidc.link(req.tenant, parseBody(oauth2LinkBody, body), requestMeta(req)));
  }
}
