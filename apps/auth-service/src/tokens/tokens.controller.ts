import { Controller, Get, Req, Res, UseFilters } from '@nestjs/common';
import type { Response } from 'express';
import { AuthErrorFilter, reply } from '../common/index.js';
import type { AuthRequest } from '../pipeline/index.js';
import { TokensService } from './tokens.service.js';

/** The tenant's public keys. `GET /token` (a JWT for the session's user) is a session read: SessionsController. */
@Controller('a/:slug')
@UseFilters(AuthErrorFilter)
export class TokensController {
  constructor(private readonly tokens: TokensService) {}

  @Get(['jwks', '.well-known/jwks.json'])
  async jwks(@Req() req: AuthRequest, @Res() res: Response) {
    return reply(res, await this.tokens.jwks(req.tenant));
  }
}
