import { Module } from '@nestjs/common';
import { MailModule } from '../mail/index.js';
import { SessionsModule } from '../sessions/index.js';
import { TenantsModule } from '../tenants/index.js';
import { UsersModule } from '../users/index.js';
import { VerificationsModule } from '../verifications/index.js';
import { EmailVerificationController } from './email-verification.controller.js';
import { EmailVerificationService } from './email-verification.service.js';

/** Verification emails and `GET /verify-email`; sign-in and sign-up send through EmailVerificationService. */
@Module({
  imports: [TenantsModule, UsersModule, VerificationsModule, MailModule, SessionsModule],
  controllers: [EmailVerificationController],
  providers: [EmailVerificationService],
  exports: [EmailVerificationService],
})
export class EmailVerificationModule {}
