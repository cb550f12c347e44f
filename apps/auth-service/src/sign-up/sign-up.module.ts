import { Module } from '@nestjs/common';
import { EmailVerificationModule } from '../email-verification/index.js';
import { PasswordModule } from '../password/index.js';
import { SessionsModule } from '../sessions/index.js';
import { TenantsModule } from '../tenants/index.js';
import { UsersModule } from '../users/index.js';
import { SignUpController } from './sign-up.controller.js';
import { SignUpService } from './sign-up.service.js';

@Module({
  imports: [TenantsModule, UsersModule, PasswordModule, SessionsModule, EmailVerificationModule],
  controllers: [SignUpController],
  providers: [SignUpService],
})
export class SignUpModule {}
