import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DeploymentsRepository, asApplicationId, asDeploymentId } from '@slipway/platform-data';
import { ApiException } from '@slipway/service-kit';
import { isUuid } from '../common/index.js';
import { CurrentApplication, type OwnedApplication, OwnedApplicationRoute } from '../owners/index.js';
import { OwnersApi } from '../owners-api/index.js';
import { BuildLogsService } from './build-logs.service.js';
import { FollowSlots } from './follow-slots.js';
import { openEventStream } from './sse.js';

/** A follower is closed after this long (a build never runs longer than DEPLOY_TIMEOUT_MS; the client reconnects if it must). */
const MAX_FOLLOW_MS = 60 * 60_000;

/**
 * Live build output (owners' API): a deployment's install and build output as server-sent
 * events while it is produced — one `data:` event per batch of whole lines,
 * `{"attempt","seq","step","text"}`, plain and redacted by the worker exactly as the step log is.
 * The stream does not end with the deployment: the client stops following once the task's status
 * (which it polls) is final.
 */
@Controller('dashboard/api/applications/:appId/deployments/:deploymentId')
@OwnedApplicationRoute()
export class BuildLogsController {
  constructor(
    private readonly logs: BuildLogsService,
    private readonly deployments: DeploymentsRepository,
    private readonly slots: FollowSlots,
  ) {}

  @Get('log/stream')
  @OwnersApi({
    summary:
      "A deployment's install and build output as server-sent events while it is produced: one `data:` event per batch of whole lines, `{attempt, seq, step, text}`, redacted as the step log. `slipway deploy`, the deployment page. At most `LOG_FOLLOWS_PER_APPLICATION` (20) streams of an application (with its runtime-log streams) per gateway process: one more → 429 `rate_limited`.",
    errors: ['not_found', 'rate_limited', 'unavailable'],
  })
  async stream(
    @CurrentApplication() app: OwnedApplication,
    @Param('deploymentId') deploymentId: string,
    @Req() req: IncomingMessage,
    @Res() res: ServerResponse,
  ): Promise<void> {
    const id = deploymentId.toLowerCase();
    const row = isUuid(id) ? await this.deployments.findForApplication(asApplicationId(app.id), asDeploymentId(id), { previews: true }) : null;
    if (!row) throw new ApiException('not_found', `No deployment task ${deploymentId.slice(0, 64)} for this application.`);
    // Refused (429) before the stream opens; the slot is back when the response closes.
    this.slots.hold(app.id, res);
    const events = openEventStream(req, res);
    const stop = await this.logs.follow(id, (chunk) => events.send(chunk));
    const timer = setTimeout(() => events.end(), MAX_FOLLOW_MS);
    await events.closed;
    clearTimeout(timer);
    await stop();
  }
}
