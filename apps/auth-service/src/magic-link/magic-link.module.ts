import { Module } from '@nestjs/common';
import { MailModule } from '../mail/index.js';
import { SessionsModule } from '../sessions/index.js';
import { TenantsModule } from '../tenants/index.js';
import { UsersModule } from '../users/index.js';
import { VerificationsModule } from '../verifications/index.js';
import { MagicLinkController } from './magic-link.controller.js';
import { MagicLinkService } from './magic-link.service.js';
import { MailboxOwnerRepository } from './mailbox-owner.repository.js';
import { MailboxOwnerService } from './mailbox-owner.service.js';

/** `POST /sign-in/magic-link`, `GET /magic-link/verify`; MailboxOwnerService (sign-in by email proof) is exported for email OTP. */
@Module({
  imports: [TenantsModule, UsersModule, VerificationsModule, MailModule, SessionsModule],
  controllers: [MagicLinkController],
  providers: [MagicLinkService, MailboxOwnerService, MailboxOwnerRepository],
  exports: [MailboxOwnerService],
})
export class MagicLinkModule {}
