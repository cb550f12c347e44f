import { Module } from '@nestjs/common';
import { SignInModule } from '../../sign-in/sign-in.module.js';
import { DashboardAccessModule } from '../common/dashboard-access.module.js';
import { DashboardSignInController } from './dashboard-sign-in.controller.js';
import { DashboardSignInRepository } from './dashboard-sign-in.repository.js';
import { DashboardSignInService } from './dashboard-sign-in.service.js';

@Module({ imports: [DashboardAccessModule, SignInModule], controllers: [DashboardSignInController], providers: [DashboardSignInRepository, DashboardSignInService] })
export class DashboardSignInModule {}
