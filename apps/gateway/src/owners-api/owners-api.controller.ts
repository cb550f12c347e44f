import { Controller, Get } from '@nestjs/common';
import { OwnersApiService } from './owners-api.service.js';

/** The owners' API describes itself (no credential needed, as GET /api/v1/openapi.json). */
@Controller('dashboard/api')
export class OwnersApiController {
  constructor(private readonly ownersApi: OwnersApiService) {}

  @Get('openapi.json')
  openApi() {
    return this.ownersApi.openApiDocument();
  }
}
