import { Module } from '@nestjs/common';
import { MailerService } from './mailer.service.js';

/** The platform mailer (emails outbox, shared development sender, optional SMTP). */
@Module({ providers: [MailerService], exports: [MailerService] })
export class MailModule {}
