import { ERROR_CODES, LIMITS, documentationUrl, formatBytes, parseStorageQuotas } from './index.js';

describe('error catalogue', () => {
  it('carries every code and status the contract names', () => {
    const byStatus = (status: number) =>
      Object.entries(ERROR_CODES)
        .filter(([, v]) => v.status === status)
        .map(([k]) => k);
    expect(byStatus(400)).toEqual(expect.arrayContaining(['empty', 'bad_request', 'bad_archive', 'paths_mismatch', 'too_large']));
    expect(byStatus(401)).toEqual(['unauthorized']);
    expect(byStatus(409)).toContain('deploy_in_progress');
    expect(byStatus(429)).toEqual(['rate_limited', 'too_many_uploads', 'too_many_sign_in_attempts']);
    expect(byStatus(400)).toContain('password_too_long');
    expect(byStatus(503)).toEqual(['unavailable', 'sign_in_busy', 'database_pooler_unavailable']);
  });

  it('links errors back to the contract', () => {
    expect(documentationUrl('http://localhost:3000/', 'paths_mismatch')).toBe('http://localhost:3000/api/v1#error-paths_mismatch');
  });

  it('publishes the contract limits', () => {
    expect(LIMITS.deploysPerHourPerApplication).toBe(20);
    expect(LIMITS.databasesPerPlan).toEqual({ free: 1, go: 1, pro: 3, scale: 5 });
  });

  it('publishes storage quotas by plan, and reads STORAGE_QUOTAS overrides', () => {
    expect(ERROR_CODES.storage_quota_exceeded.status).toBe(413);
    expect(LIMITS.storagePerPlan.free).toBe(1024 ** 3);
    expect(parseStorageQuotas(undefined)).toEqual(LIMITS.storagePerPlan);
    expect(parseStorageQuotas('free=2GiB, pro = 512MiB,scale=1073741824')).toEqual({
      ...LIMITS.storagePerPlan,
      free: 2 * 1024 ** 3,
      pro: 512 * 1024 ** 2,
      scale: 1024 ** 3,
    });
    expect(() => parseStorageQuotas('gold=1GiB')).toThrow(/plan=size with a plan of free, go, pro, scale/);
    expect(() => parseStorageQuotas('free=lots')).toThrow(/"free=lots"/);
    expect(formatBytes(1536 * 1024 * 1024)).toBe('1.5 GiB');
  });
});
