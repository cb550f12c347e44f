import { Module } from '@nestjs/common';
import { TenantPools } from './tenant-pools.js';
import { TenantsService } from './tenants.service.js';

/** Resolves `/a/{slug}` to its tenant (cached configuration) and hands out the tenant's database handle. */
@Module({ providers: [TenantPools, TenantsService], exports: [TenantsService] })
export class TenantsModule {}
