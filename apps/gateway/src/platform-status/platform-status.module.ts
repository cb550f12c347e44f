import { Module } from '@nestjs/common';
import { DashboardAccessModule } from '../owners/index.js';
import { PlatformStatusController } from './platform-status.controller.js';

@Module({ imports: [DashboardAccessModule], controllers: [PlatformStatusController] })
export class PlatformStatusModule {}
