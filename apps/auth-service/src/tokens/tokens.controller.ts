import { Controller, Get, Req, Res, UseFilters } from '@nestjs/common';
import type { Response } from 'express';
import { AuthErrorFilter } from '../common/auth-error.filter.js';
import { requestMeta, type AuthRequest } from '../common/auth-request.js';
import { reply } from '../common/auth-result.js';
import { SessionsService } from '../sessions/sessions.service.js';
import { TokensService } from './tokens.service.js';

@Controller('a/:slug')
@UseFilters(AuthErrorFilter)
export class TokensController {
  constructor(
    private readonly sessions: SessionsService,
    private readonly tokens: TokensService,
  ) {}

  @Get('token')
  async token(@Req() req: AuthRequest, @Res() res: Response) {
    return reply(res, await this.sessions.token(req.tenant, requestMeta(req)));
  }

  @Get(['jwks', '.well-known/jwks.json'])
  async jwks(@Req() req: AuthRequest, @Res() res: Response) {
    return reply(res, await this.tokens.jwks(req.tenant));
  }
}
