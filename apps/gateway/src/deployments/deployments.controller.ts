import { Controller, Get, Param, UseGuards } from '@nestjs/common';
import { ApiKeyGuard, type ApiPrincipal, CurrentApplication } from '../api-auth/index.js';
import { DeploymentsService } from './deployments.service.js';

@Controller('api/v1/deployments')
@UseGuards(ApiKeyGuard)
export class DeploymentsController {
  constructor(private readonly deployments: DeploymentsService) {}

  @Get(':taskId')
  poll(@CurrentApplication() principal: ApiPrincipal, @Param('taskId') taskId: string) {
    return this.deployments.poll(principal.applicationId, taskId);
  }
}
