import { Module } from '@nestjs/common';
import { DashboardAccessModule } from '../dashboard/common/dashboard-access.module.js';
import { RuntimeLogsController } from './runtime-logs.controller.js';
import { RuntimeLogsService } from './runtime-logs.service.js';

/** The owners' API's logs: runtime logs (from the edge) and live build output (from Redis). */
@Module({
  imports: [DashboardAccessModule],
  controllers: [RuntimeLogsController],
  providers: [RuntimeLogsService],
})
export class LogsModule {}
