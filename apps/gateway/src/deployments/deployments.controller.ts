import { Controller, Get, Param, UseGuards } from '@nestjs/common';
import { ApiKeyGuard } from '../api-auth/api-key.guard.js';
import type { ApiPrincipal } from '../api-auth/api-principal.js';
import { CurrentApplication } from '../api-auth/current-application.decorator.js';
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
