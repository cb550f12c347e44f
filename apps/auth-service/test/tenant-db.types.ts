// Type-level checks of the tenant database handle, run by `pnpm nx run auth-service:typecheck`
// (tsc over src and test): each `@ts-expect-error` line must fail to compile, or tsc reports the
// directive as unused. Nothing here is executed.
import type pg from 'pg';
import type { Tenant, TenantDb, TenantsService } from '../src/tenants/index.js';
import type { UsersRepository } from '../src/users/index.js';

declare const tenants: TenantsService;
declare const users: UsersRepository;

export async function plainPoolsAreRefused(tenant: Tenant, platformPool: pg.Pool): Promise<void> {
  await users.findByEmail(tenants.db(tenant), 'a@example.com');
  // @ts-expect-error a plain pg.Pool (the platform's, or one made anywhere) is not a tenant's database handle
  await users.findByEmail(platformPool, 'a@example.com');
  // @ts-expect-error nor is anything else with a query method
  await users.findByEmail({ query: platformPool.query.bind(platformPool) }, 'a@example.com');
}

export function tenantsAreNotSwapped<A extends string, B extends string>(a: Tenant<A>, b: Tenant<B>): TenantDb<A>[] {
  const mine: TenantDb<A> = tenants.db(a);
  // @ts-expect-error tenant B's handle where tenant A's is required
  const theirs: TenantDb<A> = tenants.db(b);
  return [mine, theirs];
}
