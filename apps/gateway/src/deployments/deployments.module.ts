import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { DeploymentsController } from './deployments.controller.js';
import { DeploymentsRepository } from './deployments.repository.js';
import { DeploymentsService } from './deployments.service.js';

@Module({
  imports: [AuthModule],
  controllers: [DeploymentsController],
  providers: [DeploymentsRepository, DeploymentsService],
  exports: [DeploymentsRepository, DeploymentsService],
})
export class DeploymentsModule {}
