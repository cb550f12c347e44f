import { Controller, Get, Query } from '@nestjs/common';
import { CurrentApplication } from '../owners/access/current-owner.decorator.js';
import { OwnedApplicationRoute } from '../owners/access/owner-guards.js';
import type { OwnedApplication } from '../owners/access/owner-principal.js';
import { OwnersApi } from '../owners-api/owners-api-doc.js';
import { ApplicationsRepository } from '@slipway/platform-data';
import { applicationOrPreview } from '../applications/preview-target.js';
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
