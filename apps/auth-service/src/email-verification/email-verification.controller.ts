import { Body, Controller, Get, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import type { Response } from 'express';
import { z } from '@slipway/config';
import { AuthErrorFilter, optionalUrl, parseBody, reply } from '../common/index.js';
import type { AuthRequest } from '../pipeline/index.js';
import { EmailVerificationService } from './email-verification.service.js';

const sendBody = z.object({ email: z.string().min(1), callbackURL: optionalUrl });

@Controller('a/:slug')
@UseFilters(AuthErrorFilter)
export class EmailVerificationController {
  constructor(private readonly verification: EmailVerificationService) {}

  @Post('send-verification-email')
  async send(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    const input = parseBody(sendBody, body);
    return reply(res, await this.verification.request(req.tenant, input.email, input.callbackURL));
  }

  @Get('verify-email')
  async verify(@Req() req: AuthRequest, @Res() res: Response, @Query('token') token?: string, @Query('callbackURL') callbackURL?: string) {
    return reply(res, await this.verification.verify(req.tenant, String(token ?? ''), callbackURL));
  }
}
