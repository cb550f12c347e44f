import { Module } from '@nestjs/common';
import { OwnerAccessModule } from '../owners/index.js';
import { BuildLogsController } from './build-logs.controller.js';
import { BuildLogsService } from './build-logs.service.js';
import { FollowSlots } from './follow-slots.js';
import { RuntimeLogsController } from './runtime-logs.controller.js';
import { RuntimeLogsService } from './runtime-logs.service.js';

/** The owners' API's logs: runtime logs (from the edge) and live build output (from Redis). */
@Module({
  imports: [OwnerAccessModule],
  controllers: [RuntimeLogsController, BuildLogsController],
  providers: [RuntimeLogsService, BuildLogsService, FollowSlots],
})
export class LogsModule {}
