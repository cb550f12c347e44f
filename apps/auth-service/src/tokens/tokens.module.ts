import { Module } from '@nestjs/common';
import { TenantsModule } from '../tenants/index.js';
import { TokensController } from './tokens.controller.js';
import { TokensRepository } from './tokens.repository.js';
import { TokensService } from './tokens.service.js';

/** JWT signing keys of each tenant: signing, rotation and the JWKS route. */
@Module({ imports: [TenantsModule], controllers: [TokensController], providers: [TokensRepository, TokensService], exports: [TokensService] })
export class TokensModule {}
