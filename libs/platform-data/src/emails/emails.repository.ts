import { Injectable } from '@nestjs/common';
import type { ApplicationId } from '../ids.js';
import { PlatformInfrastructure } from '../infrastructure.js';

/** An email to put in the outbox. */
export interface NewEmail {
  kind: string;
  to: string;
  subject: string;
  text: string;
}

/** An email as the outbox shows it. */
export interface OutboxEmail {
  id: string;
  kind: string;
  toAddress: string;
  subject: string;
  textBody: string;
  status: 'outbox' | 'sent' | 'failed';
  createdAt: Date;
  sentAt: Date | null;
}

/**
 * Emails the sign-in service sends (the outbox the local mail viewer reads).
 * Every query of the platform database on these tables lives here (ARCHITECTURE.md, "Data").
 */
@Injectable()
export class EmailsRepository {
  constructor(private readonly platform: PlatformInfrastructure) {}

  /** Puts an email in the application's outbox (status `outbox`) and answers its id. */
  async add(applicationId: ApplicationId, email: NewEmail): Promise<string> {
    const row = await this.platform.prisma.email.create({
      data: { applicationId, kind: email.kind, toAddress: email.to, subject: email.subject, textBody: email.text },
      select: { id: true },
    });
    return row.id;
  }

  /** After SMTP took the email (ids come from `add`, which the same process called). */
  async markSent(id: string, at: Date): Promise<void> {
    await this.platform.prisma.email.update({ where: { id }, data: { status: 'sent', sentAt: at } });
  }

  async markFailed(id: string): Promise<void> {
    await this.platform.prisma.email.update({ where: { id }, data: { status: 'failed' } });
  }

  /** The application's latest emails, newest first. */
  latest(applicationId: ApplicationId, limit: number): Promise<OutboxEmail[]> {
    return this.platform.prisma.email.findMany({
      where: { applicationId },
      orderBy: { createdAt: 'desc' },
      take: limit,
      select: { id: true, kind: true, toAddress: true, subject: true, textBody: true, status: true, createdAt: true, sentAt: true },
    });
  }
}
