import { TenantBudgetError, tenantConnectionBudget } from './tenant-connection-budget.js';

const config = {
  AUTH_MAX_TENANT_CONNECTIONS: 50,
  AUTH_MAX_TENANT_POOLS: 100,
  AUTH_TENANT_POOL_SIZE: 5,
  AUTH_PLATFORM_RESERVED_CONNECTIONS: 40,
  AUTH_SESSION_CACHE_SIZE: 0,
};

describe("the sign-in service's tenant connection budget", () => {
  it('never lets pools × pool size exceed the cap (the old 100 × 5 = 500 against max_connections 100 cannot happen)', () => {
    const budget = tenantConnectionBudget(config, { maxConnections: 200, superuserReserved: 10, reserved: 0 });
    expect(budget).toMatchObject({ connections: 50, pools: 10 });
    expect(budget.pools * config.AUTH_TENANT_POOL_SIZE).toBeLessThanOrEqual(budget.connections);
    expect(budget.sizedDown).toMatch(/10 tenant pools at once instead of AUTH_MAX_TENANT_POOLS 100/);
  });

  it("counts each tenant's LISTEN connection when the session cache is on", () => {
    const budget = tenantConnectionBudget({ ...config, AUTH_SESSION_CACHE_SIZE: 10_000 }, { maxConnections: 200, superuserReserved: 10, reserved: 0 });
    expect(budget).toMatchObject({ connections: 50, pools: 8 });
    expect(budget.pools * 6).toBeLessThanOrEqual(budget.connections);
  });

  it("sizes down to what the server leaves after the platform's room, and says why", () => {
    const budget = tenantConnectionBudget(config, { maxConnections: 100, superuserReserved: 3, reserved: 2 });
    expect(budget).toMatchObject({ connections: 55 - 5, pools: 10 });
    const small = tenantConnectionBudget(config, { maxConnections: 80, superuserReserved: 3, reserved: 0 });
    expect(small).toMatchObject({ connections: 37, pools: 7 });
    expect(small.sizedDown).toContain(
      'max_connections 80 − superuser_reserved_connections 3 − reserved_connections 0 − AUTH_PLATFORM_RESERVED_CONNECTIONS 40 = 37',
    );
  });

  it('divides everything among the processes of one service (pnpm start: SLIPWAY_SERVICE_PROCESSES), so together they hold what one process was sized for', () => {
    const one = tenantConnectionBudget({ ...config, AUTH_SESSION_CACHE_SIZE: 10_000 }, { maxConnections: 200, superuserReserved: 10, reserved: 0 });
    const each = tenantConnectionBudget(
      { ...config, AUTH_SESSION_CACHE_SIZE: 10_000, SLIPWAY_SERVICE_PROCESSES: 2 },
      { maxConnections: 200, superuserReserved: 10, reserved: 0 },
    );
    expect(each).toMatchObject({ connections: 25, poolSize: 2, pools: 8 });
    expect(2 * each.connections).toBeLessThanOrEqual(one.connections);
    // An application's role: both processes' pools together stay within one process's pool.
    expect(2 * each.poolSize).toBeLessThanOrEqual(config.AUTH_TENANT_POOL_SIZE);
    // The server's room is shared too: 37 left on an 80-connection server → 18 per process.
    expect(tenantConnectionBudget({ ...config, SLIPWAY_SERVICE_PROCESSES: 2 }, { maxConnections: 80, superuserReserved: 3, reserved: 0 }).connections).toBe(18);
  });

  it('refuses to start when not even one pool fits', () => {
    expect(() => tenantConnectionBudget(config, { maxConnections: 45, superuserReserved: 3, reserved: 0 })).toThrow(TenantBudgetError);
    expect(() => tenantConnectionBudget(config, { maxConnections: 45, superuserReserved: 3, reserved: 0 })).toThrow(
      /^AUTH_MAX_TENANT_CONNECTIONS: .* room for 2 sign-in connections/,
    );
  });
});
