import { Controller, Get, HttpCode, Res } from '@nestjs/common';
import type { Response } from 'express';
import { DependencyProbe } from './dependency.probe.js';

@Controller('health')
export class HealthController {
  constructor(private readonly probe: DependencyProbe) {}

  /** The process is up and its event loop turns. */
  @Get('live')
  @HttpCode(200)
  live() {
    return { status: 'ok', service: this.probe.service };
  }

  /** Postgres and Redis answer: the process can do its work. 503 with per-dependency detail otherwise. */
  @Get('ready')
  async ready(@Res({ passthrough: true }) res: Response) {
    const report = await this.probe.check();
    res.status(report.status === 'ok' ? 200 : 503);
    return report;
  }
}
