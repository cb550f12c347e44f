import { Module } from '@nestjs/common';
import { MailModule } from '../mail/index.js';
import { PasswordModule } from '../password/index.js';
import { PipelineModule } from '../pipeline/index.js';
import { SessionsModule } from '../sessions/index.js';
import { TenantsModule } from '../tenants/index.js';
import { UsersModule } from '../users/index.js';
import { VerificationsModule } from '../verifications/index.js';
import { TwoFactorChallenges } from './two-factor-challenge.service.js';
import { TwoFactorCodes } from './two-factor-codes.service.js';
import { TwoFactorController } from './two-factor.controller.js';
import { TwoFactorRepository } from './two-factor.repository.js';
import { TwoFactorService } from './two-factor.service.js';

/** Better Auth's two-factor plugin; exports the sign-in gate (`TwoFactorChallenges.gate`) for `sign-in/`. */
@Module({
  imports: [TenantsModule, UsersModule, VerificationsModule, MailModule, SessionsModule, PasswordModule, PipelineModule],
  controllers: [TwoFactorController],
  providers: [TwoFactorRepository, TwoFactorChallenges, TwoFactorCodes, TwoFactorService],
  exports: [TwoFactorChallenges],
})
export class TwoFactorModule {}
