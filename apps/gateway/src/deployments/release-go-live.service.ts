import { Inject, Injectable, Logger } from '@nestjs/common';
import { EdgeHandoff } from '@slipway/messaging';
import { DeploymentsRepository, asApplicationId, asReleaseId } from '@slipway/platform-data';
import { ReleaseGoLive, ReleaseNotFoundError, type EdgeStartFailure } from '@slipway/runtime';
import { ApiException } from '@slipway/service-kit';
import { RoutesPublisher } from '../common/index.js';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';

/** The log tail quoted in a `release_unhealthy` message (the whole tail is the edge's, up to 8000 characters). */
const TAIL_QUOTED = 2000;

/**
 * A rollback's or promote's side of making a release live (libs/runtime `ReleaseGoLive`, the
 * protocol a deploy follows too): the edge starts the release and finds it healthy (a static one:
 * unpacked), is asked to serve it, then it is committed and every edge told. The edge's answers
 * become the API's errors; the live release keeps serving on any of them.
 */
@Injectable()
export class ReleaseGoLiveService {
  private readonly logger = new Logger('ReleaseGoLive');
  private readonly live: ReleaseGoLive;

  constructor(
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    private readonly deployments: DeploymentsRepository,
    routes: RoutesPublisher,
  ) {
    const edge = new EdgeHandoff({ edgeUrl: config.EDGE_INTERNAL_URL, masterKey: config.SLIPWAY_MASTER_KEY, timeoutMs: config.RELEASE_TIMEOUT_MS });
    this.live = new ReleaseGoLive(edge, (message) => routes.announce(message));
  }

  async makeLive(applicationId: string, releaseId: string): Promise<void> {
    try {
      await this.live.run(this.deployments, asApplicationId(applicationId), asReleaseId(releaseId), {
        start: true,
        refused: apiExceptionOf,
        switched: (outcome) => {
          // Not fatal (as for the worker): an edge that did not switch now does on the routes message after the commit.
          if (outcome.switched) return;
          if ('status' in outcome)
            this.logger.warn(`the edge did not switch ${applicationId} to ${releaseId} yet (${outcome.status}); it will on the routes message`);
          else this.logger.warn(`the edge did not answer the switch of ${applicationId}: ${outcome.message}; it will on the routes message`);
        },
      });
    } catch (error) {
      if (error instanceof ReleaseNotFoundError) throw new ApiException('not_found', 'This application has no such release.');
      throw error;
    }
  }
}

/** A failed start as the API's error. */
export function apiExceptionOf(outcome: EdgeStartFailure): ApiException {
  switch (outcome.kind) {
    case 'not_found':
      return new ApiException('not_found', 'This application has no such release.');
    case 'unhealthy': {
      const tail = outcome.logTail ? ` Its output ended with:\n${outcome.logTail.slice(-TAIL_QUOTED)}` : '';
      return new ApiException(
        'release_unhealthy',
        `The release did not become healthy (${outcome.error ?? 'no reason given'}); the live release keeps serving.${tail}`,
      );
    }
    case 'unreachable':
      return new ApiException('unavailable', `The edge did not answer (${outcome.message}); the live release keeps serving.`);
    case 'sandbox_unavailable':
    case 'refused':
      return new ApiException(
        'unavailable',
        `The edge could not start the release (${outcome.status}${outcome.error ? `: ${outcome.error}` : ''}); the live release keeps serving.`,
      );
  }
}
