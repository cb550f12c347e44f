import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Redis } from 'ioredis';
import { EmailsRepository, asApplicationId } from '@slipway/platform-data';
import { AUTH_CONFIG, type AuthConfig } from '../config.js';
import { REDIS } from '../platform/index.js';
import type { Tenant } from '../tenants/index.js';

export interface OutgoingEmail {
  /** Also the outbox row's `kind`. The plugins' kinds: a second factor's code, a sign-in link, an email code, an invitation. */
  kind: 'password_reset' | 'email_verification' | 'two_factor_otp' | 'magic_link' | 'email_otp' | 'organization_invitation';
  to: string;
  subject: string;
  text: string;
}

/**
 * The platform mailer: writes to the platform `emails` outbox through the shared development
 * sender, which is rate limited per application. Over the limit the email is dropped (and
 * logged) while the caller answers exactly as if it was sent, so nothing leaks about accounts.
 * With SMTP_URL the email is also delivered, after the answer (so its timing tells nothing
 * either), and the row becomes `sent` or `failed`.
 */
@Injectable()
export class MailerService implements OnModuleDestroy {
  private readonly logger = new Logger('MailerService');
  private readonly transport: Transporter | undefined;
  private readonly deliveries = new Set<Promise<void>>();

  constructor(
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
    private readonly emails: EmailsRepository,
    @Inject(REDIS) private readonly redis: Redis,
  ) {
    if (config.SMTP_URL) this.transport = nodemailer.createTransport(config.SMTP_URL);
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.allSettled([...this.deliveries]);
    this.transport?.close();
  }

  async send(tenant: Tenant, email: OutgoingEmail): Promise<boolean> {
    const hour = Math.floor(Date.now() / 3_600_000);
    const key = `${this.config.AUTH_REDIS_PREFIX}mail:${tenant.applicationId}:${hour}`;
    const count = await this.redis.incr(key);
    if (count === 1) await this.redis.expire(key, 3600);
    if (count > this.config.AUTH_DEV_EMAILS_PER_HOUR) {
      this.logger.warn(`shared sender limit reached for ${tenant.slug}; ${email.kind} email dropped`);
      return false;
    }
    const id = await this.emails.add(asApplicationId(tenant.applicationId), email);
    if (this.transport) {
      const delivery = this.deliver(this.transport, id, email).finally(() => this.deliveries.delete(delivery));
      this.deliveries.add(delivery);
    }
    return true;
  }

  private async deliver(transport: Transporter, id: string, email: OutgoingEmail): Promise<void> {
    try {
      await transport.sendMail({ from: this.config.SMTP_FROM, to: email.to, subject: email.subject, text: email.text });
      await this.emails.markSent(id, new Date());
    } catch (error) {
      this.logger.warn(`SMTP delivery of email ${id} failed: ${(error as Error).message}`);
      await this.emails.markFailed(id).catch(() => undefined);
    }
  }
}
