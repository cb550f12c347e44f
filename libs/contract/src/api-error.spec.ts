import { ApiError } from './api-error.js';

describe('ApiError (what the CLI and the dashboard throw for a refused answer)', () => {
  it('reads the platform JSON: code, message and extras', () => {
    const error = ApiError.fromText(
      409,
      'Conflict',
      JSON.stringify({
        error: 'A deployment is running.',
        code: 'deploy_in_progress',
        taskId: 't-1',
        retryAfterSeconds: 3,
        correlationId: 'c-9',
        documentation: 'https://x/docs',
      }),
    );
    expect([error.status, error.code, error.message, error.taskId, error.retryAfterSeconds, error.correlationId, error.documentation, error.line()]).toEqual([
      409,
      'deploy_in_progress',
      'A deployment is running.',
      't-1',
      3,
      'c-9',
      'https://x/docs',
      'deploy_in_progress: A deployment is running.',
    ]);
  });

  it('words an answer that is not the platform JSON by its status, with the start of the text', () => {
    const error = ApiError.fromText(502, 'Bad Gateway', '<html>upstream down</html>');
    expect([error.code, error.message, error.taskId]).toEqual(['http_502', 'HTTP 502 Bad Gateway: <html>upstream down</html>', undefined]);
    expect(ApiError.fromText(500, '', '[1]').code).toBe('http_500');
  });

  it('keeps fields of the wrong type out of the typed getters', () => {
    const error = ApiError.fromText(429, 'Too Many Requests', JSON.stringify({ code: 'rate_limited', error: 'Slow down.', retryAfterSeconds: '3', taskId: 7 }));
    expect([error.retryAfterSeconds, error.taskId]).toEqual([undefined, undefined]);
  });
});
