import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
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
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly previews: PreviewsService,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.PREVIEW_SWEEP_SECONDS <= 0) return;
    this.timer = setInterval(() => void this.sweep(), this.config.PREVIEW_SWEEP_SECONDS * 1000);
    this.timer.unref();
  }

  async sweep(): Promise<void> {
    if (this.running) return this.running;
    this.running = this.previews
      .removeExpired()
      .then((count) => void (count && this.logger.log(`${count} expired preview(s) removed`)))
      .catch((error: Error) => this.logger.warn(`expired previews not removed this time: ${error.message}`))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
