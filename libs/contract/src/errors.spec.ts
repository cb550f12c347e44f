import { ERROR_CODES, LIMITS, documentationUrl } from './index.js';

describe('error catalogue', () => {
  it('carries every code and status the contract names', () => {
    const byStatus = (status: number) => Object.entries(ERROR_CODES).filter(([, v]) => v.status === status).map(([k]) => k);
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
});
