import { Body, Controller, Post, Req, Res, UseFilters } from '@nestjs/common';
import type { Response } from 'express';
import { AuthErrorFilter, parseBody, reply } from '../common/index.js';
import { requestMeta, type AuthRequest } from '../pipeline/index.js';
import { requirePlugin } from '../tenants/index.js';
import { checkOtpBody, requestResetBody, resetPasswordBody, sendOtpBody, signInOtpBody, verifyEmailBody } from './dto/email-otp.dto.js';
import { EmailOtpService } from './email-otp.service.js';

/** Better Auth's email-OTP plugin (`emailOTPClient`), on while `settings.plugins.emailOTP.enabled`. */
@Controller('a/:slug')
@UseFilters(AuthErrorFilter)
export class EmailOtpController {
  constructor(private readonly otps: EmailOtpService) {}

  @Post('email-otp/send-verification-otp')
  async send(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    requirePlugin(req.tenant, 'emailOTP');
    const input = parseBody(sendOtpBody, body);
    return reply(res, await this.otps.send(req.tenant, input.email, input.type));
  }

  /** Better Auth's deprecated spelling of request-password-reset; both are served. */
  @Post('forget-password/email-otp')
  async forgetPassword(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    requirePlugin(req.tenant, 'emailOTP');
    return reply(res, await this.otps.send(req.tenant, parseBody(requestResetBody, body).email, 'forget-password'));
  }

  @Post('email-otp/request-password-reset')
  async requestPasswordReset(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    requirePlugin(req.tenant, 'emailOTP');
    return reply(res, await this.otps.send(req.tenant, parseBody(requestResetBody, body).email, 'forget-password'));
  }

  @Post('email-otp/check-verification-otp')
  async check(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    requirePlugin(req.tenant, 'emailOTP');
    const input = parseBody(checkOtpBody, body);
    return reply(res, await this.otps.check(req.tenant, input.email, input.type, input.otp, requestMeta(req)));
  }

  @Post('sign-in/email-otp')
  async signIn(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    requirePlugin(req.tenant, 'emailOTP');
    return reply(res, await this.otps.signIn(req.tenant, parseBody(signInOtpBody, body), requestMeta(req)));
  }

  @Post('email-otp/verify-email')
  async verifyEmail(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    requirePlugin(req.tenant, 'emailOTP');
    const input = parseBody(verifyEmailBody, body);
    return reply(res, await this.otps.verifyEmail(req.tenant, input.email, input.otp, requestMeta(req)));
  }

  @Post('email-otp/reset-password')
  async resetPassword(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    requirePlugin(req.tenant, 'emailOTP');
    const input = parseBody(resetPasswordBody, body);
    return reply(res, await this.otps.resetPassword(req.tenant, input.email, input.otp, input.password, requestMeta(req)));
  }
}
