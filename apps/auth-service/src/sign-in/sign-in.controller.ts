import { Body, Controller, Post, Req, Res, UseFilters } from '@nestjs/common';
import type { Response } from 'express';
import { AuthErrorFilter, parseBody, reply } from '../common/index.js';
import { requestMeta, type AuthRequest } from '../pipeline/index.js';
import { signInBody } from './dto/sign-in.dto.js';
import { SignInService } from './sign-in.service.js';

@Controller('a/:slug')
@UseFilters(AuthErrorFilter)
export class SignInController {
  constructor(private readonly signInService: SignInService) {}

  @Post('sign-in/email')
  async signIn(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.signInService.signIn(req.tenant, parseBody(signInBody, body), requestMeta(req)));
  }
}
