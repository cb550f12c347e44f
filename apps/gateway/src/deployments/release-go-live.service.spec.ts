import { apiExceptionOf } from './release-go-live.service.js';

/** A rollback's or promote's failed start on the edge as the API answers it. */
describe('apiExceptionOf', () => {
  const answer = (outcome: Parameters<typeof apiExceptionOf>[0]) => {
    const { code, status, message } = apiExceptionOf(outcome);
    return { code, status, message };
  };

  it('an unknown release: not_found', () => {
    expect(answer({ kind: 'not_found', status: 404, error: 'no such release' })).toMatchObject({
      code: 'not_found',
      message: 'This application has no such release.',
    });
  });

  it('an unhealthy release: release_unhealthy, its log tail quoted (the last 2000 characters)', () => {
    expect(answer({ kind: 'unhealthy', status: 422, error: 'exited with 1', logTail: `${'x'.repeat(3000)}end` })).toMatchObject({
      code: 'release_unhealthy',
      message: `The release did not become healthy (exited with 1); the live release keeps serving. Its output ended with:\n${'x'.repeat(1997)}end`,
    });
    expect(answer({ kind: 'unhealthy', status: 422 }).message).toBe('The release did not become healthy (no reason given); the live release keeps serving.');
  });

  it('an edge that refused or did not answer: unavailable', () => {
    expect(answer({ kind: 'sandbox_unavailable', status: 503, error: 'no user namespaces' })).toMatchObject({
      code: 'unavailable',
      message: 'The edge could not start the release (503: no user namespaces); the live release keeps serving.',
    });
    expect(answer({ kind: 'refused', status: 500 })).toMatchObject({
      code: 'unavailable',
      message: 'The edge could not start the release (500); the live release keeps serving.',
    });
    expect(answer({ kind: 'unreachable', message: 'fetch failed' })).toMatchObject({
      code: 'unavailable',
      message: 'The edge did not answer (fetch failed); the live release keeps serving.',
    });
  });
});
