import { Body, Controller, Post, Req, Res, UseFilters } from '@nestjs/common';
import type { Response } from 'express';
import { AuthErrorFilter, parseBody, reply } from '../common/index.js';
import { requestMeta, type AuthRequest } from '../pipeline/index.js';
import { signUpBody } from './dto/sign-up.dto.js';
import { SignUpService } from './sign-up.service.js';

@Controller('a/:slug')
@UseFilters(AuthErrorFilter)
export class SignUpController {
  constructor(private readonly signUpService: SignUpService) {}

  @Post('sign-up/email')
  async signUp(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.signUpService.signUp(req.tenant, parseBody(signUpBody, body), requestMeta(req)));
  }
}
