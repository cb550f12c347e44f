import { Body, Controller, Get, Put, UseGuards } from '@nestjs/common';
import { ApiKeyGuard, type ApiPrincipal, CurrentApplication } from '../api-auth/index.js';
import { JsonBodyGuard } from '../common/index.js';
import { SecretsService } from './secrets.service.js';

@Controller('api/v1/secrets')
@UseGuards(ApiKeyGuard)
export class SecretsController {
  constructor(private readonly secrets: SecretsService) {}

  @Get()
  list(@CurrentApplication() principal: ApiPrincipal) {
    return this.secrets.list(principal.applicationId);
  }

  @Put()
  @UseGuards(JsonBodyGuard)
  put(@CurrentApplication() principal: ApiPrincipal, @Body() body: unknown) {
    return this.secrets.put(principal.applicationId, body);
  }
}
