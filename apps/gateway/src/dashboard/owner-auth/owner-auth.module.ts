import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { OwnerLocalStrategy } from './local.strategy.js';
import { LocalAuthGuard } from './local-auth.guard.js';
import { OwnerAuthController } from './owner-auth.controller.js';
import { OwnerAuthService } from './owner-auth.service.js';
import { OwnerSessionsService } from './owner-sessions.service.js';
import { OwnerPasswords } from './owner-passwords.js';
import { SignInLimiter } from '../../rate-limit/sign-in-limiter.js';

@Module({
  imports: [PassportModule],
  controllers: [OwnerAuthController],
  providers: [OwnerSessionsService, OwnerAuthService, OwnerPasswords, SignInLimiter, OwnerLocalStrategy, LocalAuthGuard],
  exports: [OwnerSessionsService],
})
export class OwnerAuthModule {}
