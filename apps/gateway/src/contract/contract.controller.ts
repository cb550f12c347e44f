import { Controller, Get } from '@nestjs/common';
import { ContractService } from './contract.service.js';

@Controller('api/v1')
export class ContractController {
  constructor(private readonly contract: ContractService) {}

  @Get()
  describe() {
    return this.contract.describe();
  }

  @Get('openapi.json')
  openApi() {
    return this.contract.openApiDocument();
  }
}
