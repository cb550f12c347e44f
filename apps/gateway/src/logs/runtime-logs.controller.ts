import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CurrentApplication, type OwnedApplication, OwnedApplicationRoute } from '../owners/index.js';
import { OwnersApi } from '../owners-api/index.js';
import { ApplicationsRepository } from '@slipway/platform-data';
import { applicationOrPreview } from '../applications/index.js';
import { instant, lineLimit, releaseParam } from './log-params.js';
import { FollowSlots } from './follow-slots.js';
import { openEventStream } from './sse.js';
import { RuntimeLogsService } from './runtime-logs.service.js';

type LogQueryParams = { since?: string; until?: string; release?: string; limit?: string; preview?: string };

/**
 * Runtime logs of an application (owners' API): every line its releases wrote to stdout or
 * stderr, with `time`, `stream` (`stdout`, `stderr`, or `slipway` for the platform's own notes:
 * start, exit, restart, dropped lines) and `releaseId`. The text is the app's own output as it
 * wrote it: a client shows it with control characters neutralised (the CLI's terminal rule; the
 * dashboard renders it as text).
 */
@Controller('dashboard/api/applications/:appId')
@OwnedApplicationRoute()
export class RuntimeLogsController {
  constructor(
    private readonly logs: RuntimeLogsService,
    private readonly slots: FollowSlots,
    private readonly applications: ApplicationsRepository,
  ) {}

  /** `?since=15m|ISO&until=…&release=<id>&limit=200`: the newest `limit` lines in the window, oldest first. */
  @Get('logs')
  @OwnersApi({
    summary:
      "Runtime log lines (`time`, `stream`, `text`, `releaseId`), oldest first: the newest `limit` (default 200) in `since`..`until` (15m, 2h, 1d or ISO time), of one `release` or all; `preview=<name>`: that preview's. `slipway logs`.",
    errors: ['bad_request', 'not_found', 'unavailable'],
  })
  async history(@CurrentApplication() app: OwnedApplication, @Query() query: LogQueryParams) {
    return this.logs.history(await applicationOrPreview(this.applications, app, query.preview), {
      since: instant('since', query.since),
      until: instant('until', query.until),
      release: releaseParam(query.release),
      limit: lineLimit(query.limit),
    });
  }

  /**
   * Live tail as server-sent events: the newest `limit` lines since `since` first (default none),
   * then each line as it is written; one `data:` event per line (the same JSON object).
   */
  @Get('logs/stream')
  @OwnersApi({
    summary:
      "Live tail as server-sent events (text/event-stream): the newest `limit` lines since `since` (default none), then each line as it is written, one `data:` event (the same JSON object) per line. `slipway logs --follow`, the Logs tab; `preview=<name>`: that preview's. At most `LOG_FOLLOWS_PER_APPLICATION` (20) streams of an application (with its build-output streams) per gateway process: one more → 429 `rate_limited`.",
    errors: ['bad_request', 'not_found', 'rate_limited', 'unavailable'],
  })
  async stream(
    @CurrentApplication() app: OwnedApplication,
    @Query() query: LogQueryParams,
    @Req() req: IncomingMessage,
    @Res() res: ServerResponse,
  ): Promise<void> {
    const params = {
      since: instant('since', query.since),
      release: releaseParam(query.release),
      limit: query.limit === undefined && query.since === undefined ? 0 : lineLimit(query.limit),
    };
    const id = await applicationOrPreview(this.applications, app, query.preview);
    // Refused (429) before the edge is asked; the slot is back when the response closes, whatever happens below.
    this.slots.hold(id, res);
    const abort = new AbortController();
    res.once('close', () => abort.abort());
    let events: ReturnType<typeof openEventStream> | undefined;
    try {
      await this.logs.follow(
        id,
        params,
        abort.signal,
        (line) => {
          events ??= openEventStream(req, res);
          events.send(line);
        },
        () => {
          events ??= openEventStream(req, res);
        },
      );
    } catch (error) {
      // Before the stream opened: the contract's error shape; after: the stream ends (EventSource reconnects).
      if (!events) throw error;
    }
    (events ?? openEventStream(req, res)).end();
  }
}
