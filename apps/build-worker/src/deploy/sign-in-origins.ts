import { Inject, Injectable } from '@nestjs/common';
import { refreshTrustedOrigins } from '@slipway/sign-in-core';
import { ApplicationsRepository, asApplicationId } from '@slipway/platform-data';
import { tenantChangedChannel } from '@slipway/messaging';
import type { Redis } from 'ioredis';
import { WORKER_CONFIG, type WorkerConfig } from '../config.js';
import { PUBLISHER } from '../tokens.js';

/**
 * Contract B.4: trusted origins are registered again on every deploy of an application whose
 * sign-in is on (its address under every publishing domain, plus its custom domains), and every
 * sign-in service replica is told to drop its cached copy.
 */
@Injectable()
export class SignInOrigins {
  constructor(
    @Inject(WORKER_CONFIG) private readonly config: WorkerConfig,
    private readonly applications: ApplicationsRepository,
    @Inject(PUBLISHER) private readonly publisher: Redis,
  ) {}

  async refresh(applicationId: string): Promise<string[]> {
    const origins = await refreshTrustedOrigins(this.applications, asApplicationId(applicationId), {
      appsDomains: this.config.APPS_DOMAIN,
      appsScheme: this.config.APPS_SCHEME,
    });
    const channel = tenantChangedChannel();
    await this.publisher.publish(channel.name, channel.encode({ applicationId }));
    return origins;
  }
}
