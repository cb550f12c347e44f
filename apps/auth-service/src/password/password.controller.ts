import { Body, Controller, Get, Param, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import type { Response } from 'express';
import { AuthErrorFilter, AuthErrors, parseBody, reply } from '../common/index.js';
import { requestMeta, type AuthRequest } from '../pipeline/index.js';
import { changeBody, requestResetBody, resetBody } from './dto/password.dto.js';
import { PasswordService } from './password.service.js';

@Controller('a/:slug')
@UseFilters(AuthErrorFilter)
export class PasswordController {
  constructor(private readonly passwords: PasswordService) {}

  @Post('request-password-reset')
  async requestReset(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    const input = parseBody(requestResetBody, body);
    return reply(res, await this.passwords.requestReset(req.tenant, input.email, input.redirectTo));
  }

  @Get('reset-password/:token')
  async resetLink(@Req() req: AuthRequest, @Res() res: Response, @Param('token') token: string, @Query('callbackURL') callbackURL?: string) {
    return reply(res, await this.passwords.resetLink(req.tenant, token, callbackURL));
  }

  @Post('reset-password')
  async reset(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown, @Query('token') queryToken?: string) {
    const input = parseBody(resetBody, body);
    const token = input.token ?? queryToken;
    if (!token) throw AuthErrors.invalidToken();
    return reply(res, await this.passwords.reset(req.tenant, token, input.newPassword));
  }

  @Post('change-password')
  async change(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    const input = parseBody(changeBody, body);
    return reply(res, await this.passwords.change(req.tenant, requestMeta(req), input.currentPassword, input.newPassword));
  }
}
