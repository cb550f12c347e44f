import { Controller, Get, Header, Post, Query, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { CurrentSignInPrincipal } from './current-sign-in-principal.decorator.js';
import type { SignInPrincipal } from './sign-in-principal.js';
import { OwnerTokenOrApiKeyGuard } from './owner-token-or-api-key.guard.js';
import { SignInServicesService } from './sign-in-services.service.js';

@Controller('api/v1/auth')
@UseGuards(OwnerTokenOrApiKeyGuard)
export class SignInServicesController {
  constructor(private readonly signIn: SignInServicesService) {}

  /** 201 when this call switched sign-in on, 200 with the same record afterwards. */
  @Post()
  async enable(
    @CurrentSignInPrincipal() principal: SignInPrincipal,
    @Query('applicationId') applicationId: unknown,
    @Res({ passthrough: true }) res: Response,
  ) {
    const { created, record } = await this.signIn.enable(principal, applicationId);
    res.status(created ? 201 : 200);
    return record;
  }

  @Get('env')
  @Header('Content-Type', 'text/plain; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  env(@CurrentSignInPrincipal() principal: SignInPrincipal, @Query('applicationId') applicationId: unknown) {
    return this.signIn.envText(principal, applicationId);
  }

  @Get()
  list(@CurrentSignInPrincipal() principal: SignInPrincipal) {
    return this.signIn.list(principal);
  }
}
