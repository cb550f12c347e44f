import { Body, Controller, Get, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import type { Response } from 'express';
import { AuthErrorFilter, AuthErrors, parseBody, reply } from '../common/index.js';
import { requestMeta, type AuthRequest } from '../pipeline/index.js';
import { deletePasskeyBody, registerOptionsQuery, updatePasskeyBody, verifyAuthenticationBody, verifyRegistrationBody } from './dto/passkey.dto.js';
import { PasskeyService, type PasskeyRequest } from './passkey.service.js';

function passkeyRequest(req: AuthRequest): PasskeyRequest {
  return { meta: requestMeta(req), origin: req.headers.origin, referer: req.headers.referer };
}

@Controller('a/:slug/passkey')
@UseFilters(AuthErrorFilter)
export class PasskeyController {
  constructor(private readonly passkeys: PasskeyService) {}

  @Get('generate-register-options')
  async registrationOptions(@Req() req: AuthRequest, @Res() res: Response, @Query() query: unknown) {
    const parsed = registerOptionsQuery.safeParse(query ?? {});
    if (!parsed.success) throw AuthErrors.validation(`[query.${parsed.error.issues[0]!.path.join('.')}] ${parsed.error.issues[0]!.message}`);
    return reply(res, await this.passkeys.registrationOptions(req.tenant, passkeyRequest(req), parsed.data));
  }

  @Post('verify-registration')
  async verifyRegistration(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.passkeys.verifyRegistration(req.tenant, passkeyRequest(req), parseBody(verifyRegistrationBody, body)));
  }

  @Get('generate-authenticate-options')
  async authenticationOptions(@Req() req: AuthRequest, @Res() res: Response) {
    return reply(res, await this.passkeys.authenticationOptions(req.tenant, passkeyRequest(req)));
  }

  @Post('verify-authentication')
  async verifyAuthentication(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.passkeys.verifyAuthentication(req.tenant, passkeyRequest(req), parseBody(verifyAuthenticationBody, body)));
  }

  @Get('list-user-passkeys')
  async list(@Req() req: AuthRequest, @Res() res: Response) {
    return reply(res, await this.passkeys.list(req.tenant, requestMeta(req)));
  }

  @Post('delete-passkey')
  async delete(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.passkeys.delete(req.tenant, requestMeta(req), parseBody(deletePasskeyBody, body).id));
  }

  @Post('update-passkey')
  async rename(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    const { id, name } = parseBody(updatePasskeyBody, body);
    return reply(res, await this.passkeys.rename(req.tenant, requestMeta(req), id, name));
  }
}
