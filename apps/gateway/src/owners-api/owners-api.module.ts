import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { OwnersApiController } from './owners-api.controller.js';
import { OwnersApiService } from './owners-api.service.js';

/** The owners' API's own OpenAPI document (its routes live with their resources). */
@Module({ imports: [DiscoveryModule], controllers: [OwnersApiController], providers: [OwnersApiService] })
export class OwnersApiModule {}
