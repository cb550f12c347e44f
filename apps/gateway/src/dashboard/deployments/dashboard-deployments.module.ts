import { Module } from '@nestjs/common';
import { DeploymentsModule } from '../../deployments/deployments.module.js';
import { DashboardAccessModule } from '../common/dashboard-access.module.js';
import { DashboardDeploymentsController } from './dashboard-deployments.controller.js';
import { DashboardDeploymentsRepository } from './dashboard-deployments.repository.js';
import { DashboardDeploymentsService } from './dashboard-deployments.service.js';

@Module({
  imports: [DashboardAccessModule, DeploymentsModule],
  controllers: [DashboardDeploymentsController],
  providers: [DashboardDeploymentsRepository, DashboardDeploymentsService],
})
export class DashboardDeploymentsModule {}
