// The cookies the service reads and writes: the exactly-one rule and the session cookie's format.
export { cookieValues, soleCookie } from './cookie-header.js';
export { SESSION_COOKIE, SESSION_MAX_AGE_SECONDS, clearedSessionCookie, hasAmbiguousSessionCookie, sessionCookie, signedValue, tokenFromCookieHeader } from './session-cookie.js';
