import { Module } from '@nestjs/common';
import { DashboardAccessModule } from '../owners/index.js';
import { MetricsController } from './metrics.controller.js';
import { MetricsService } from './metrics.service.js';

@Module({ imports: [DashboardAccessModule], controllers: [MetricsController], providers: [MetricsService] })
export class MetricsModule {}
