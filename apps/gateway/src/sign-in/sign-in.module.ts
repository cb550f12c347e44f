import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { PersonalAccessTokensRepository } from './personal-access-tokens.repository.js';
import { SignInTokenGuard } from './sign-in-token.guard.js';
import { SignInController } from './sign-in.controller.js';
import { SignInRepository } from './sign-in.repository.js';
import { SignInService } from './sign-in.service.js';
import { TenantChangedPublisher } from './tenant-changed.publisher.js';

/** The platform calls that switch sign-in on: `/api/v1/auth`. */
@Module({
  imports: [AuthModule],
  controllers: [SignInController],
  providers: [PersonalAccessTokensRepository, SignInRepository, SignInService, SignInTokenGuard, TenantChangedPublisher],
  exports: [SignInService, TenantChangedPublisher],
})
export class SignInModule {}
