import { Module } from '@nestjs/common';
import { DashboardAccessModule } from '../common/dashboard-access.module.js';
import { TokensController } from './tokens.controller.js';
import { TokensRepository } from './tokens.repository.js';
import { TokensService } from './tokens.service.js';

@Module({ imports: [DashboardAccessModule], controllers: [TokensController], providers: [TokensRepository, TokensService] })
export class TokensModule {}
