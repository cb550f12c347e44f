import { Module } from '@nestjs/common';
import { MagicLinkModule } from '../magic-link/index.js';
import { MailModule } from '../mail/index.js';
import { PasswordModule } from '../password/index.js';
import { PipelineModule } from '../pipeline/index.js';
import { SessionsModule } from '../sessions/index.js';
import { TenantsModule } from '../tenants/index.js';
import { UsersModule } from '../users/index.js';
import { EmailOtpController } from './email-otp.controller.js';
import { EmailOtpRepository } from './email-otp.repository.js';
import { EmailOtpService } from './email-otp.service.js';

/** Emailed one-time codes: sign-in, email verification, password reset (Better Auth's email-OTP plugin). */
@Module({
  imports: [TenantsModule, UsersModule, MailModule, SessionsModule, PipelineModule, PasswordModule, MagicLinkModule],
  controllers: [EmailOtpController],
  providers: [EmailOtpService, EmailOtpRepository],
})
export class EmailOtpModule {}
