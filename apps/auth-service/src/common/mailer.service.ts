import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import type { PrismaClient } from '@slipway/db';
import { AUTH_CONFIG, type AuthConfig } from '../config.js';
import { PLATFORM_PRISMA, REDIS } from './platform.providers.js';
import type { Tenant } from '../tenants/tenant.js';

export interface OutgoingEmail {
  kind: 'password_reset' | 'email_verification';
  to: string;
  subject: string;
  text: string;
}

/**
 * The platform mailer: writes to the platform `emails` outbox through the shared development
 * sender, which is rate limited per application. Over the limit the email is dropped (and
 * logged) while the caller answers exactly as if it was sent, so nothing leaks about accounts.
 */
@Injectable()
export class MailerService {
  private readonly logger = new Logger('MailerService');

  constructor(
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
    @Inject(PLATFORM_PRISMA) private readonly prisma: PrismaClient,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

  async send(tenant: Tenant, email: OutgoingEmail): Promise<boolean> {
    const hour = Math.floor(Date.now() / 3_600_000);
    const key = `${this.config.AUTH_REDIS_PREFIX}mail:${tenant.applicationId}:${hour}`;
    const count = await this.redis.incr(key);
    if (count === 1) await this.redis.expire(key, 3600);
    if (count > this.config.AUTH_DEV_EMAILS_PER_HOUR) {
      this.logger.warn(`shared sender limit reached for ${tenant.slug}; ${email.kind} email dropped`);
      return false;
    }
    await this.prisma.email.create({
      data: { applicationId: tenant.applicationId, kind: email.kind, toAddress: email.to, subject: email.subject, textBody: email.text },
    });
    return true;
  }
}
