import { autoBuildSlots, autoBuildsPerOwner } from './build-slots.js';
import { resolveSlots, workerConfigSchema } from './config.js';

const GiB = 1024 ** 3;

describe('build slots', () => {
  it('auto: one core kept for the platform, and each slot fits a 2 GiB build after 4 GiB kept', () => {
    expect(autoBuildSlots({ cores: 2, memoryBytes: 24 * GiB }, 2 * GiB)).toBe(1);
    expect(autoBuildSlots({ cores: 1, memoryBytes: 24 * GiB }, 2 * GiB)).toBe(1);
    expect(autoBuildSlots({ cores: 8, memoryBytes: 8 * GiB }, 2 * GiB)).toBe(2);
    expect(autoBuildSlots({ cores: 8, memoryBytes: 64 * GiB }, 2 * GiB)).toBe(7);
    expect(autoBuildSlots({ cores: 64, memoryBytes: 1024 * GiB }, 2 * GiB)).toBe(16);
    expect(autoBuildSlots({ cores: 4, memoryBytes: 2 * GiB }, 2 * GiB)).toBe(1);
  });

  it('auto: a slot fits the build memory limit the operator set (BUILD_MEMORY_MB)', () => {
    expect(autoBuildSlots({ cores: 8, memoryBytes: 16 * GiB }, 4 * GiB)).toBe(3);
    expect(autoBuildSlots({ cores: 8, memoryBytes: 16 * GiB }, 1 * GiB)).toBe(7);
  });

  it('auto per owner: one slot fewer than the worker has, never below one', () => {
    expect([1, 2, 3, 8].map(autoBuildsPerOwner)).toEqual([1, 1, 2, 7]);
  });

  it('resolves auto for the machine and keeps explicit numbers', () => {
    const env = { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/slipway', SLIPWAY_MASTER_KEY: Buffer.alloc(32, 1).toString('base64') };
    const parsed = workerConfigSchema.parse(env);
    expect(resolveSlots(parsed, { cores: 8, memoryBytes: 64 * GiB })).toMatchObject({ WORKER_CONCURRENCY: 7, BUILDS_PER_OWNER: 6 });
    const bigBuilds = workerConfigSchema.parse({ ...env, BUILD_MEMORY_MB: '8192' });
    expect(resolveSlots(bigBuilds, { cores: 8, memoryBytes: 20 * GiB })).toMatchObject({ WORKER_CONCURRENCY: 2 });
    const explicit = workerConfigSchema.parse({ ...env, WORKER_CONCURRENCY: '3', BUILDS_PER_OWNER: '3' });
    expect(resolveSlots(explicit, { cores: 2, memoryBytes: 4 * GiB })).toMatchObject({ WORKER_CONCURRENCY: 3, BUILDS_PER_OWNER: 3 });
    expect(() => workerConfigSchema.parse({ ...env, WORKER_CONCURRENCY: '0' })).toThrow();
    expect(() => workerConfigSchema.parse({ ...env, DEPLOY_QUEUE_ORDER: 'lifo' })).toThrow();
  });
});
