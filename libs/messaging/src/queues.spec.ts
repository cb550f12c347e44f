import { assertIdsOnly, jobIdFor } from './index.js';

describe('job catalogue', () => {
  it('derives the job id from the deployment id', () => {
    expect(jobIdFor('deploy', { deploymentId: 'd1', applicationId: 'a1' })).toBe('d1');
  });

  it('rejects payloads carrying anything but identifiers', () => {
    expect(() => assertIdsOnly({ deploymentId: '3f1c2a4e-0000-4000-8000-000000000000' })).not.toThrow();
    expect(() => assertIdsOnly({ deploymentId: 'x', secret: 'sk live value with spaces' })).toThrow(/secret must be an identifier/);
    expect(() => assertIdsOnly({ count: 3 })).toThrow(/count/);
  });
});
