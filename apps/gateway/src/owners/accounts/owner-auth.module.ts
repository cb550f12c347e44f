import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { OwnerLocalStrategy } from './local.strategy.js';
import { LocalAuthGuard } from './local-auth.guard.js';
import { OwnerAuthController } from './owner-auth.controller.js';
import { OwnerAuthService } from './owner-auth.service.js';
import { OwnerSessionsService } from './owner-sessions.service.js';
import { OwnerPasswords } from './owner-passwords.js';
import { SignInLimiter } from './owner-sign-in-limiter.js';
import { AuthModule } from '../../api-auth/index.js';
import { CsrfGuard } from '../access/csrf.guard.js';

@Module({
  imports: [PassportModule, AuthModule],
  controllers: [OwnerAuthController],
  // CsrfGuard and AuthModule: the owner routes' guard (OwnerSessionGuard) is built in this module too.
  providers: [OwnerSessionsService, OwnerAuthService, OwnerPasswords, SignInLimiter, OwnerLocalStrategy, LocalAuthGuard, CsrfGuard],
  exports: [OwnerSessionsService],
})
export class OwnerAuthModule {}
