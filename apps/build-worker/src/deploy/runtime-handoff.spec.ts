import { stepFailureOf } from './runtime-handoff.js';

/** A failed start on the edge as the deploy records it: the code and message a user reads. */
describe('stepFailureOf', () => {
  const edgeUrl = 'http://127.0.0.1:9';
  const failure = (outcome: Parameters<typeof stepFailureOf>[0]) => {
    const { code, message, log } = stepFailureOf(outcome, edgeUrl);
    return { code, message, log };
  };

  it('an unhealthy release: release_unhealthy with the edge’s reason and its log tail', () => {
    expect(failure({ kind: 'unhealthy', status: 422, error: 'exited with 1', logTail: 'boom' })).toEqual({
      code: 'release_unhealthy',
      message: 'exited with 1',
      log: 'boom\n',
    });
    expect(failure({ kind: 'unhealthy', status: 422 })).toEqual({
      code: 'release_unhealthy',
      message: 'the new release did not become healthy; the previous release keeps serving',
      log: '',
    });
  });

  it('an edge that cannot sandbox: sandbox_unavailable', () => {
    expect(failure({ kind: 'sandbox_unavailable', status: 503, error: 'no user namespaces' })).toEqual({
      code: 'sandbox_unavailable',
      message: 'the edge cannot sandbox the application, so nothing of it ran: no user namespaces',
      log: '',
    });
  });

  it('anything else: release_failed, naming the status or the edge that did not answer', () => {
    expect(failure({ kind: 'refused', status: 500, error: 'oops' })).toEqual({
      code: 'release_failed',
      message: 'the edge refused the release (500): oops',
      log: '',
    });
    expect(failure({ kind: 'not_found', status: 404 })).toEqual({
      code: 'release_failed',
      message: 'the edge refused the release (404): no reason given',
      log: '',
    });
    expect(failure({ kind: 'unreachable', message: 'fetch failed' })).toEqual({
      code: 'release_failed',
      message: 'the edge at http://127.0.0.1:9 did not answer: fetch failed',
      log: '',
    });
  });
});
