import { ApiError } from '@slipway/contract';

/** Errors the dashboard API answers with: `{error, code}` (libs/contract's ApiError); the UI words them by code. */
export { ApiError };

const FRIENDLY: Record<string, string> = {
  unauthorized: 'Your session has ended. Sign in again.',
  forbidden: 'That change was refused. Reload the page and try again.',
  not_found: 'This no longer exists, or it is not yours.',
  email_taken: 'An account with this email already exists. Sign in instead.',
  too_large: 'That is larger than the platform allows.',
  internal: 'Something went wrong on our side. Try again in a moment.',
  unavailable: 'The platform is briefly unavailable. Try again in a moment.',
};

/**
 * The message to show a person: the server's own words for input problems (they name the field),
 * a plain sentence for everything else. Never raw JSON.
 */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) {
    // Their own words name the field, or (domains) the exact DNS record to set and what was found.
    if (['bad_request', 'too_large', 'domain_taken', 'domain_unverified'].includes(error.code)) return error.message;
    if (error.code === 'unauthorized' && error.message.includes('email or password')) return 'That email and password do not match an account.';
    // An answer without the platform's JSON (a proxy's page): worded by its status, never raw.
    if (error.code.startsWith('http_'))
      return error.status === 502 || error.status === 503 || error.status === 504
        ? FRIENDLY['unavailable']!
        : error.status >= 500
          ? FRIENDLY['internal']!
          : `The platform answered HTTP ${error.status}.`;
    return FRIENDLY[error.code] ?? error.message;
  }
  return 'Could not reach the platform. Check your connection and try again.';
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (method !== 'GET') headers['X-Slipway-Csrf'] = '1';
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(`/dashboard/api${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const json = parseJson(text);
  if (!response.ok) {
    const error = ApiError.fromText(response.status, response.statusText, text);
    if (error.code === 'unauthorized' && !path.startsWith('/session/sign-')) window.dispatchEvent(new CustomEvent('slipway:signed-out'));
    throw error;
  }
  return json as T;
}

function parseJson(text: string): unknown {
  try {
    return text ? (JSON.parse(text) as unknown) : null;
  } catch {
    return null;
  }
}

export const api = {
  get: <T>(path: string) => call<T>('GET', path),
  post: <T>(path: string, body: unknown = {}) => call<T>('POST', path, body),
  put: <T>(path: string, body: unknown) => call<T>('PUT', path, body),
  patch: <T>(path: string, body: unknown) => call<T>('PATCH', path, body),
  delete: <T>(path: string) => call<T>('DELETE', path),
};
