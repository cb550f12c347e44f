import { Module } from '@nestjs/common';
import { OwnerAccessModule } from '../owners/index.js';
import { PlatformStatusController } from './platform-status.controller.js';

@Module({ imports: [OwnerAccessModule], controllers: [PlatformStatusController] })
export class PlatformStatusModule {}
