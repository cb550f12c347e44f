import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { DeploymentsModule } from '../deployments/deployments.module.js';
import { DeployController } from './deploy.controller.js';
import { DeployQueue } from './deploy-queue.js';
import { DeployService } from './deploy.service.js';
import { SourceIntakeService } from './source/source-intake.service.js';
import { UploadSlots } from './upload-slots.js';

@Module({
  imports: [AuthModule, DeploymentsModule],
  controllers: [DeployController],
  providers: [DeployService, DeployQueue, SourceIntakeService, UploadSlots],
})
export class DeployModule {}
