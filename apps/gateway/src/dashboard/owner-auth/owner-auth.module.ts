import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { OwnerLocalStrategy } from './local.strategy.js';
import { LocalAuthGuard } from './local-auth.guard.js';
import { OwnerAuthController } from './owner-auth.controller.js';
import { OwnerAuthService } from './owner-auth.service.js';
import { OwnerSessionsRepository } from './owner-sessions.repository.js';
import { OwnerSessionsService } from './owner-sessions.service.js';
import { OwnersRepository } from './owners.repository.js';

@Module({
  imports: [PassportModule],
  controllers: [OwnerAuthController],
  providers: [OwnersRepository, OwnerSessionsRepository, OwnerSessionsService, OwnerAuthService, OwnerLocalStrategy, LocalAuthGuard],
  exports: [OwnerSessionsService, OwnersRepository],
})
export class OwnerAuthModule {}
