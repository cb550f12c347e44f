import { Module } from '@nestjs/common';
import { SessionsModule } from '../sessions/index.js';
import { TenantsModule } from '../tenants/index.js';
import { UsersModule } from '../users/index.js';
import { VerificationsModule } from '../verifications/index.js';
import { PasskeyController } from './passkey.controller.js';
import { PasskeyRepository } from './passkey.repository.js';
import { PasskeyService } from './passkey.service.js';

/** Better Auth's passkey plugin (WebAuthn), switched by `settings.plugins.passkey.enabled`. */
@Module({
  imports: [TenantsModule, UsersModule, VerificationsModule, SessionsModule],
  controllers: [PasskeyController],
  providers: [PasskeyRepository, PasskeyService],
})
export class PasskeyModule {}
