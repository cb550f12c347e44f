import { Body, Controller, Post, Req, Res, UseFilters } from '@nestjs/common';
import type { Response } from 'express';
import { AuthErrorFilter, parseBody, reply } from '../common/index.js';
import { requestMeta, type AuthRequest } from '../pipeline/index.js';
import { requirePlugin } from '../tenants/index.js';
import { enableBody, passwordBody, sendOtpBody, verifyBackupCodeBody, verifyCodeBody } from './dto/two-factor.dto.js';
import { TwoFactorCodes } from './two-factor-codes.service.js';
import { TwoFactorService } from './two-factor.service.js';

/** Better Auth's two-factor routes; each answers 404 (an unknown path) while the application has the plugin off. */
@Controller('a/:slug/two-factor')
@UseFilters(AuthErrorFilter)
export class TwoFactorController {
  constructor(
    private readonly twoFactor: TwoFactorService,
    private readonly codes: TwoFactorCodes,
  ) {}

  @Post('enable')
  async enable(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    requirePlugin(req.tenant, 'twoFactor');
    return reply(res, await this.twoFactor.enable(req.tenant, requestMeta(req), parseBody(enableBody, body)));
  }

  @Post('disable')
  async disable(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    requirePlugin(req.tenant, 'twoFactor');
    return reply(res, await this.twoFactor.disable(req.tenant, requestMeta(req), parseBody(passwordBody, body).password));
  }

  @Post('get-totp-uri')
  async totpURI(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    requirePlugin(req.tenant, 'twoFactor');
    return reply(res, await this.twoFactor.totpURI(req.tenant, requestMeta(req), parseBody(passwordBody, body).password));
  }

  @Post('generate-backup-codes')
  async generateBackupCodes(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    requirePlugin(req.tenant, 'twoFactor');
    return reply(res, await this.twoFactor.generateBackupCodes(req.tenant, requestMeta(req), parseBody(passwordBody, body).password));
  }

  @Post('verify-totp')
  async verifyTotp(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    requirePlugin(req.tenant, 'twoFactor');
    return reply(res, await this.codes.verifyTotp(req.tenant, requestMeta(req), parseBody(verifyCodeBody, body)));
  }

  @Post('send-otp')
  async sendOtp(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    requirePlugin(req.tenant, 'twoFactor');
    parseBody(sendOtpBody, body);
    return reply(res, await this.codes.sendOtp(req.tenant, requestMeta(req)));
  }

  @Post('verify-otp')
  async verifyOtp(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    requirePlugin(req.tenant, 'twoFactor');
    return reply(res, await this.codes.verifyOtp(req.tenant, requestMeta(req), parseBody(verifyCodeBody, body)));
  }

  @Post('verify-backup-code')
  async verifyBackupCode(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    requirePlugin(req.tenant, 'twoFactor');
    return reply(res, await this.codes.verifyBackupCode(req.tenant, requestMeta(req), parseBody(verifyBackupCodeBody, body)));
  }
}
