import { Module } from '@nestjs/common';
import { EmailVerificationModule } from '../email-verification/index.js';
import { PasswordModule } from '../password/index.js';
import { PipelineModule } from '../pipeline/index.js';
import { SessionsModule } from '../sessions/index.js';
import { TenantsModule } from '../tenants/index.js';
import { TwoFactorModule } from '../two-factor/index.js';
import { UsersModule } from '../users/index.js';
import { SignInController } from './sign-in.controller.js';
import { SignInService } from './sign-in.service.js';

@Module({
  imports: [TenantsModule, UsersModule, PasswordModule, SessionsModule, EmailVerificationModule, PipelineModule, TwoFactorModule],
  controllers: [SignInController],
  providers: [SignInService],
})
export class SignInModule {}
