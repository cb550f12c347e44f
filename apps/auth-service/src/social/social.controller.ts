import { Body, Controller, Get, Param, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import type { Response } from 'express';
import { AuthErrorFilter, parseBody, reply } from '../common/index.js';
import { requestMeta, type AuthRequest } from '../pipeline/index.js';
import { socialSignInBody } from './dto/social.dto.js';
import { SocialService } from './social.service.js';

@Controller('a/:slug')
@UseFilters(AuthErrorFilter)
export class SocialController {
  constructor(private readonly social: SocialService) {}

  @Post('sign-in/social')
  async start(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.social.start(req.tenant, parseBody(socialSignInBody, body)));
  }

  @Get('callback/:provider')
  async callback(@Req() req: AuthRequest, @Res() res: Response, @Param('provider') provider: string, @Query() query: Record<string, string>) {
    return reply(res, await this.social.callback(req.tenant, provider, query, requestMeta(req)));
  }
}
