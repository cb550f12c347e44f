import { Inject, Injectable } from '@nestjs/common';
import { ApiException } from '@slipway/service-kit';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';

/** What a refused follow is told to wait (`Retry-After`, `retryAfterSeconds`), as a refused upload is. */
export const FOLLOW_RETRY_AFTER_SECONDS = 5;

/** The response a slot is held for: released when it closes (`res.closed` once it has). */
export interface ClosingResponse {
  readonly closed: boolean;
  once(event: 'close', listener: () => void): unknown;
}

/**
 * Open log follows (server-sent event streams) per application in this gateway process, at most
 * `LOG_FOLLOWS_PER_APPLICATION` each: the runtime-log tail and the live build output share them.
 * A follow takes its slot before its stream opens and gives it back when its response closes,
 * exactly once, however the follow ended (the client went, the edge or Redis failed, the follow
 * was refused after the slot was taken, the server stopped). Counted in memory, not Redis:
 * a slot lives exactly as long as a socket of this process, so a process that dies takes its
 * slots with it and nothing needs a lease; the price is that the cap is per process (N gateway
 * processes or replicas allow N × the cap per application).
 */
@Injectable()
export class FollowSlots {
  private readonly open = new Map<string, number>();
  readonly perApplication: number;

  constructor(@Inject(GATEWAY_CONFIG) config: Pick<GatewayConfig, 'LOG_FOLLOWS_PER_APPLICATION'>) {
    this.perApplication = config.LOG_FOLLOWS_PER_APPLICATION;
  }

  /** The application's follows open now in this process. */
  count(applicationId: string): number {
    return this.open.get(applicationId) ?? 0;
  }

  /**
   * Takes one of the application's slots until `res` closes, or throws `429 rate_limited` (before
   * anything was written to `res`, so the client gets the platform's error shape). A response that
   * has already closed (the client went while the route was still checking) gives it back at once.
   */
  hold(applicationId: string, res: ClosingResponse): void {
    const release = this.take(applicationId);
    if (res.closed) return release();
    res.once('close', release);
  }

  /** One slot, or the refusal; the returned release is idempotent. */
  take(applicationId: string): () => void {
    const held = this.count(applicationId);
    if (held >= this.perApplication) {
      throw new ApiException(
        'rate_limited',
        `This application already has ${held} log streams open on this gateway process, the most allowed (LOG_FOLLOWS_PER_APPLICATION=${this.perApplication}); close one or retry in ${FOLLOW_RETRY_AFTER_SECONDS} seconds.`,
        { retryAfterSeconds: FOLLOW_RETRY_AFTER_SECONDS },
        { 'Retry-After': String(FOLLOW_RETRY_AFTER_SECONDS) },
      );
    }
    this.open.set(applicationId, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.count(applicationId) - 1;
      if (left > 0) this.open.set(applicationId, left);
      else this.open.delete(applicationId);
    };
  }
}
