/** RUNTIME_LOG_*: the log budget's settings, validated once at boot with the variable named. */
import { randomBytes } from 'node:crypto';
import { DEFAULT_LOG_LIMITS } from '@slipway/runtime';
import { logLimitsOf } from '@slipway/data-plane';
import { loadEdgeConfig } from '../config.js';

const base = {
  DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/x',
  REDIS_URL: 'redis://127.0.0.1:6379',
  SLIPWAY_MASTER_KEY: randomBytes(32).toString('base64'),
};

describe('RUNTIME_LOG_*', () => {
  it('defaults to 3 files of 8 MiB per release, 256 KiB/s kept (1 MiB burst) and 1 MiB/s read per application', () => {
    expect(logLimitsOf(loadEdgeConfig(base))).toEqual({
      maxBytes: 8 * 1024 * 1024,
      files: 3,
      rateBytes: 256 * 1024,
      burstBytes: 1024 * 1024,
      readRateBytes: 1024 * 1024,
    });
    expect(logLimitsOf(loadEdgeConfig(base))).toEqual(DEFAULT_LOG_LIMITS);
  });

  it("takes the operator's values", () => {
    const env = {
      ...base,
      RUNTIME_LOG_MAX_BYTES: '1048576',
      RUNTIME_LOG_FILES: '5',
      RUNTIME_LOG_RATE_BYTES: '65536',
      RUNTIME_LOG_BURST_BYTES: '131072',
      RUNTIME_LOG_READ_RATE_BYTES: '262144',
    };
    expect(logLimitsOf(loadEdgeConfig(env))).toEqual({ maxBytes: 1048576, files: 5, rateBytes: 65536, burstBytes: 131072, readRateBytes: 262144 });
  });

  it('refuses a budget it could not keep, naming the variable', () => {
    expect(() => loadEdgeConfig({ ...base, RUNTIME_LOG_RATE_BYTES: '2097152' })).toThrow(
      /^RUNTIME_LOG_READ_RATE_BYTES: must be at least RUNTIME_LOG_RATE_BYTES \(2097152\)/,
    );
    expect(() => loadEdgeConfig({ ...base, RUNTIME_LOG_MAX_BYTES: '1000' })).toThrow(/^RUNTIME_LOG_MAX_BYTES: /);
    expect(() => loadEdgeConfig({ ...base, RUNTIME_LOG_FILES: '0' })).toThrow(/^RUNTIME_LOG_FILES: /);
    expect(() => loadEdgeConfig({ ...base, RUNTIME_LOG_RATE_BYTES: 'lots' })).toThrow(/^RUNTIME_LOG_RATE_BYTES: /);
  });
});
