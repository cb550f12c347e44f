import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { PeriodicTask } from '@slipway/service-kit';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';
import { PreviewsService } from './previews.service.js';

/**
 * Removes expired previews every `PREVIEW_SWEEP_SECONDS` (their address stops answering, their
 * releases and stored bytes go). Every gateway process sweeps; removal is one transaction per
 * preview, so two processes never both remove one (the second finds it gone).
 */
@Injectable()
export class PreviewExpiry implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Previews');
  private readonly task = new PeriodicTask(
    async () => {
      const count = await this.previews.removeExpired();
      if (count) this.logger.log(`${count} expired preview(s) removed`);
    },
    (error) => this.logger.warn(`expired previews not removed this time: ${error.message}`),
  );

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly previews: PreviewsService,
  ) {}

  onApplicationBootstrap(): void {
    const everyMs = this.config.PREVIEW_SWEEP_SECONDS * 1000;
    if (everyMs > 0) this.task.start(everyMs, everyMs);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task.stop();
  }
}
