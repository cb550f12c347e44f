export { createAuthServer, getSession, handler, verifyToken, type AuthServer } from './auth-server.js';
export { CLIENT_ADDRESS_HEADER, CLIENT_ADDRESS_MAX_SKEW_SECONDS, signClientAddress, verifyClientAddress } from './client-address.js';
export { SERVICE_SESSION_COOKIE, SESSION_COOKIE, firstPartySetCookie, forwardedCookies, soleCookie, verifySessionCookie } from './cookies.js';
export { expressHandler } from './express-adapter.js';
export { optionsFromEnv, type AuthServerOptions } from './options.js';
export { createAuthHandler, type AuthHandler, type HandlerContext } from './proxy-handler.js';
export type { CookieSource, Session, SessionUser } from './session.js';
export type { SignInClaims } from './verify-token.js';
