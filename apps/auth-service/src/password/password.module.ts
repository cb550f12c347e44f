import { Module } from '@nestjs/common';
import { MailModule } from '../mail/index.js';
import { PipelineModule } from '../pipeline/index.js';
import { SessionsModule } from '../sessions/index.js';
import { TenantsModule } from '../tenants/index.js';
import { UsersModule } from '../users/index.js';
import { VerificationsModule } from '../verifications/index.js';
import { PasswordHasher } from './password-hasher.js';
import { PasswordController } from './password.controller.js';
import { PasswordService } from './password.service.js';

/** Password reset and change; PasswordHasher (bcrypt, length rules) is exported for sign-in and sign-up, PasswordService for resets by emailed code. */
@Module({
  imports: [TenantsModule, UsersModule, VerificationsModule, MailModule, SessionsModule, PipelineModule],
  controllers: [PasswordController],
  providers: [PasswordHasher, PasswordService],
  exports: [PasswordHasher, PasswordService],
})
export class PasswordModule {}
