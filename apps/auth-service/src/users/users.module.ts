import { Module } from '@nestjs/common';
import { UsersRepository } from './users.repository.js';

/** Users and their accounts in the tenant's `service_auth` schema; the routes that change them live in their features. */
@Module({ providers: [UsersRepository], exports: [UsersRepository] })
export class UsersModule {}
