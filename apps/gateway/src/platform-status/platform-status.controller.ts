import { Controller, Get } from '@nestjs/common';
import { DependencyProbe } from '@slipway/service-kit';
import { OwnerRoute } from '../owners/index.js';

/**
 * What the dashboard's banner shows: whether a build worker consumes the deploy queue (from the
 * workers' heartbeats in Redis, as the gateway's /health/ready reports it under `siblings`).
 */
@Controller('dashboard/api/platform-status')
@OwnerRoute()
export class PlatformStatusController {
  constructor(private readonly probe: DependencyProbe) {}

  @Get()
  async get() {
    const buildWorker = await this.probe.sibling('build-worker');
    return { buildWorker: { status: buildWorker.status, ...(buildWorker.status === 'up' ? {} : { message: buildWorker.error ?? 'unknown' }) } };
  }
}
