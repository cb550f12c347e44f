import { StartupError, oneLine, redactUrl, waitForDependencies } from './dependencies.js';

const PG = process.env['TEST_DATABASE_URL'] ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

describe('waitForDependencies (real Postgres and Redis)', () => {
  it('returns once both answer', async () => {
    await expect(waitForDependencies({ postgresUrl: PG, redisUrl: REDIS }, 2000)).resolves.toBeUndefined();
  });

  it('names the variable of the dependency that does not answer', async () => {
    await expect(waitForDependencies({ postgresUrl: PG, redisUrl: 'redis://127.0.0.1:1' }, 300)).rejects.toThrow(
      expect.objectContaining({
        name: 'StartupError',
        message: expect.stringMatching(/^Redis at redis:\/\/127\.0\.0\.1:1 is not answering \(.+\); check REDIS_URL$/),
      }),
    );
    await expect(waitForDependencies({ postgresUrl: 'postgresql://nobody:pw@127.0.0.1:1/db' }, 300)).rejects.toThrow(StartupError);
  });

  it('never prints a password', async () => {
    expect(redactUrl('postgresql://app:s3cret@db:5432/x')).toBe('postgresql://app:***@db:5432/x');
    await expect(waitForDependencies({ postgresUrl: 'postgresql://app:s3cret@127.0.0.1:1/x' }, 100)).rejects.toThrow(/app:\*\*\*@/);
  });

  it('reduces any error to one line', () => {
    expect(oneLine(new Error('first\nsecond'))).toBe('first');
    expect(oneLine('plain')).toBe('plain');
  });
});
