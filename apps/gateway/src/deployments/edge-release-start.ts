import { Inject, Injectable, Logger } from '@nestjs/common';
import { RELEASE_START_PATH, SWITCH_RELEASE_PATH, edgeInternalToken } from '@slipway/runtime';
import { ApiException } from '@slipway/server';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';

/** The log tail quoted in a `release_unhealthy` message (the whole tail is the edge's, up to 8000 characters). */
const TAIL_QUOTED = 2000;

/**
 * The edge's internal API as a rollback or promote uses it: the same two calls the build worker
 * makes before it commits a release (apps/build-worker runtime-handoff.ts). `start` resolves once
 * the edge has started the release and found it healthy (a static one: unpacked); `switchTo` asks
 * it to serve the release now, before the commit, so the answer never precedes the swap.
 */
@Injectable()
export class EdgeReleaseStart {
  private readonly logger = new Logger('EdgeReleaseStart');

  constructor(@Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig) {}

  async start(releaseId: string): Promise<void> {
    const response = await this.post(RELEASE_START_PATH(releaseId), this.config.RELEASE_TIMEOUT_MS);
    if (response.ok) return;
    const body = (await response.json().catch(() => ({}))) as { error?: string; code?: string; logTail?: string };
    if (response.status === 404) throw new ApiException('not_found', 'This application has no such release.');
    if (response.status === 422) {
      const tail = body.logTail ? ` Its output ended with:\n${body.logTail.slice(-TAIL_QUOTED)}` : '';
      throw new ApiException('release_unhealthy', `The release did not become healthy (${body.error ?? 'no reason given'}); the live release keeps serving.${tail}`);
    }
    throw new ApiException('unavailable', `The edge could not start the release (${response.status}${body.error ? `: ${body.error}` : ''}); the live release keeps serving.`);
  }

  /** Not fatal (as for the worker): an edge that did not switch now does on the routes message after the commit. */
  async switchTo(applicationId: string, releaseId: string): Promise<void> {
    try {
      const response = await this.post(SWITCH_RELEASE_PATH(applicationId, releaseId), Math.min(this.config.RELEASE_TIMEOUT_MS, 30_000));
      if (!response.ok) this.logger.warn(`the edge did not switch ${applicationId} to ${releaseId} yet (${response.status}); it will on the routes message`);
    } catch (error) {
      this.logger.warn(`the edge did not answer the switch of ${applicationId}: ${(error as Error).message}; it will on the routes message`);
    }
  }

  private async post(path: string, timeoutMs: number): Promise<Response> {
    try {
      return await fetch(`${this.config.EDGE_INTERNAL_URL}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${edgeInternalToken(this.config.SLIPWAY_MASTER_KEY)}` },
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      if (error instanceof ApiException) throw error;
      throw new ApiException('unavailable', `The edge did not answer (${(error as Error).message}); the live release keeps serving.`);
    }
  }
}
