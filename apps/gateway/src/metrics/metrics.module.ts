import { Module } from '@nestjs/common';
import { OwnerAccessModule } from '../owners/index.js';
import { MetricsController } from './metrics.controller.js';
import { MetricsService } from './metrics.service.js';

@Module({ imports: [OwnerAccessModule], controllers: [MetricsController], providers: [MetricsService] })
export class MetricsModule {}
