import { Body, Controller, Delete, Get, Param, Patch, Post } from '@nestjs/common';
import { CurrentOwner } from '../common/current-owner.decorator.js';
import { OwnerRoute } from '../common/owner-guards.js';
import type { OwnerPrincipal } from '../common/owner-principal.js';
import { TokensService } from './tokens.service.js';

@Controller('dashboard/api/tokens')
@OwnerRoute()
export class TokensController {
  constructor(private readonly tokens: TokensService) {}

  @Get()
  list(@CurrentOwner() owner: OwnerPrincipal) {
    return this.tokens.list(owner.id);
  }

  @Post()
  create(@CurrentOwner() owner: OwnerPrincipal, @Body() body: unknown) {
    return this.tokens.create(owner.id, body);
  }

  @Patch(':tokenId')
  rename(@CurrentOwner() owner: OwnerPrincipal, @Param('tokenId') tokenId: string, @Body() body: unknown) {
    return this.tokens.rename(owner.id, tokenId, body);
  }

  @Post(':tokenId/rotate')
  rotate(@CurrentOwner() owner: OwnerPrincipal, @Param('tokenId') tokenId: string) {
    return this.tokens.rotate(owner.id, tokenId);
  }

  @Delete(':tokenId')
  revoke(@CurrentOwner() owner: OwnerPrincipal, @Param('tokenId') tokenId: string) {
    return this.tokens.revoke(owner.id, tokenId);
  }
}
