// The cookies the service reads and writes: the exactly-one rule, the signed format of every cookie, the session cookie.
export { cookieValues, soleCookie } from './cookie-header.js';
export {
  SESSION_COOKIE,
  SESSION_MAX_AGE_SECONDS,
  clearedCookie,
  clearedSessionCookie,
  hasAmbiguousSessionCookie,
  readSignedCookie,
  sessionCookie,
  signedCookie,
  signedValue,
  tokenFromCookieHeader,
} from './session-cookie.js';
