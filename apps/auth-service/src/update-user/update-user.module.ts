import { Module } from '@nestjs/common';
import { SessionsModule } from '../sessions/index.js';
import { TenantsModule } from '../tenants/index.js';
import { UsersModule } from '../users/index.js';
import { UpdateUserController } from './update-user.controller.js';
import { UpdateUserService } from './update-user.service.js';

@Module({ imports: [TenantsModule, UsersModule, SessionsModule], controllers: [UpdateUserController], providers: [UpdateUserService] })
export class UpdateUserModule {}
