import { Controller, Get, Query } from '@nestjs/common';
import { CurrentApplication, type OwnedApplication, OwnedApplicationRoute } from '../owners/index.js';
import { OwnersApi } from '../owners-api/index.js';
import { ApplicationsRepository } from '@slipway/platform-data';
import { applicationOrPreview } from '../applications/index.js';
import { MetricsService } from './metrics.service.js';

/** `GET …/metrics?range=hour|day`: requests/s, answers by class, p50/p95/p99, CPU, memory, restarts (docs/guides/first-minute-and-metrics.md). */
@Controller('dashboard/api/applications/:appId/metrics')
@OwnedApplicationRoute()
export class MetricsController {
  constructor(
    private readonly metrics: MetricsService,
    private readonly applications: ApplicationsRepository,
  ) {}

  @Get()
  @OwnersApi({
    summary:
      "The last hour by the minute (`range=hour`, the default) or day by 10 minutes (`range=day`): requests/s, answers by class, p50/p95/p99 latency, CPU, memory, restarts, as the edges counted them; a summary and the points; `preview=<name>`: that preview's. `slipway metrics`.",
    errors: ['bad_request', 'not_found', 'unavailable'],
  })
  async series(@CurrentApplication() app: OwnedApplication, @Query('range') range?: string, @Query('preview') preview?: string) {
    return this.metrics.series(await applicationOrPreview(this.applications, app, preview), range);
  }
}
