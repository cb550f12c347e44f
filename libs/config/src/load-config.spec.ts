import { ConfigError, baseServerFields, loadConfig, masterKey, parsedBy, z } from './index.js';

const schema = z.object({ ...baseServerFields, SLIPWAY_MASTER_KEY: masterKey });
const good = {
  DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/slipway',
  SLIPWAY_MASTER_KEY: Buffer.alloc(32, 7).toString('base64'),
};

describe('loadConfig', () => {
  it('applies defaults for optional fields', () => {
    const config = loadConfig(schema, good);
    expect(config.REDIS_URL).toBe('redis://127.0.0.1:6379');
    expect(config.STARTUP_TIMEOUT_MS).toBe(10_000);
  });

  it('names the variable and the value in one line', () => {
    expect(() => loadConfig(schema, { ...good, REDIS_URL: 'nope' })).toThrow(new ConfigError('REDIS_URL: must be a redis:// or rediss:// URL (got "nope")'));
  });

  it('a field read by its own parser: the parsed value, its defaults when unset, its error under the variable', () => {
    const pairs = (text: string | undefined) => {
      if (text === undefined) return { free: 1 };
      if (!/^\w+=\d+$/.test(text)) throw new Error('must be plan=size pairs');
      const [plan, size] = text.split('=');
      return { [plan!]: Number(size) };
    };
    const withPairs = z.object({ ...baseServerFields, QUOTAS: parsedBy(pairs) });
    expect(loadConfig(withPairs, { ...good, QUOTAS: 'pro=20' }).QUOTAS).toEqual({ pro: 20 });
    expect(loadConfig(withPairs, good).QUOTAS).toEqual({ free: 1 });
    expect(() => loadConfig(withPairs, { ...good, QUOTAS: 'lots' })).toThrow(/^QUOTAS: must be plan=size pairs/);
  });

  it('reports a missing required variable', () => {
    expect(() => loadConfig(schema, { SLIPWAY_MASTER_KEY: good.SLIPWAY_MASTER_KEY })).toThrow(/^DATABASE_URL: is required \(not set\)$/);
  });

  it('never echoes a secret value', () => {
    const attempt = () => loadConfig(schema, { ...good, SLIPWAY_MASTER_KEY: 'hunter2-not-a-key' });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/^SLIPWAY_MASTER_KEY: must be 32 bytes/);
    expect(attempt).not.toThrow(/hunter2/);
  });

  it('never echoes the credentials of a URL', () => {
    const attempt = () => loadConfig(schema, { ...good, DATABASE_URL: 'mysql://admin:hunter2@db.example.com/slipway' });
    expect(attempt).toThrow(new ConfigError('DATABASE_URL: must be a postgres:// or postgresql:// URL (got "mysql://***@db.example.com/slipway")'));
  });
});
