import { Controller, HttpCode, Post, Req, Res, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiKeyGuard, type ApiPrincipal, CurrentApplication } from '../api-auth/index.js';
import { DeployService } from './deploy.service.js';

@Controller('api/v1/deploy')
@UseGuards(ApiKeyGuard)
export class DeployController {
  constructor(private readonly deploy: DeployService) {}

  @Post()
  @HttpCode(202)
  accept(@CurrentApplication() principal: ApiPrincipal, @Req() req: Request, @Res({ passthrough: true }) res: Response) {
    return this.deploy.accept(principal, req, res);
  }
}
