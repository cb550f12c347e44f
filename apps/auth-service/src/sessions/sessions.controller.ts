import { Body, Controller, Get, Post, Req, Res, UseFilters } from '@nestjs/common';
import type { Response } from 'express';
import { z } from '@slipway/config';
import { AuthErrorFilter, parseBody, reply } from '../common/index.js';
import { requestMeta, type AuthRequest } from '../pipeline/index.js';
import { SessionsService } from './sessions.service.js';

const revokeBody = z.object({ token: z.string().min(1) });

@Controller('a/:slug')
@UseFilters(AuthErrorFilter)
export class SessionsController {
  constructor(private readonly sessions: SessionsService) {}

  @Get('get-session')
  async getSession(@Req() req: AuthRequest, @Res() res: Response) {
    return reply(res, await this.sessions.getSession(req.tenant, requestMeta(req)));
  }

  /** A JWT for the session's user (also answered by SessionReadsFastPath). */
  @Get('token')
  async token(@Req() req: AuthRequest, @Res() res: Response) {
    return reply(res, await this.sessions.token(req.tenant, requestMeta(req)));
  }

  @Post('sign-out')
  async signOut(@Req() req: AuthRequest, @Res() res: Response) {
    return reply(res, await this.sessions.signOut(req.tenant, requestMeta(req)));
  }

  @Get('list-sessions')
  async list(@Req() req: AuthRequest, @Res() res: Response) {
    return reply(res, await this.sessions.list(req.tenant, requestMeta(req)));
  }

  @Post('revoke-session')
  async revoke(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.sessions.revoke(req.tenant, requestMeta(req), parseBody(revokeBody, body).token));
  }

  @Post('revoke-sessions')
  async revokeAll(@Req() req: AuthRequest, @Res() res: Response) {
    return reply(res, await this.sessions.revokeAll(req.tenant, requestMeta(req), false));
  }

  @Post('revoke-other-sessions')
  async revokeOthers(@Req() req: AuthRequest, @Res() res: Response) {
    return reply(res, await this.sessions.revokeAll(req.tenant, requestMeta(req), true));
  }

  @Get('ok')
  ok(@Res() res: Response) {
    return reply(res, { body: { ok: true } });
  }
}
