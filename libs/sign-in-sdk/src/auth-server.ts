import { optionsFromEnv, type AuthServerOptions } from './options.js';
import { createAuthHandler, type AuthHandler } from './proxy-handler.js';
import { SessionReader, type CookieSource, type Session } from './session.js';
import { createTokenVerifier, type SignInClaims } from './verify-token.js';
import { expressHandler } from './express-adapter.js';

export interface AuthServer {
  /** Web `Request` → `Response`: mount on `${mountPath}/*`. */
  handler: AuthHandler;
  /** Express / node:http middleware doing the same. */
  express: ReturnType<typeof expressHandler>;
  getSession(source: CookieSource): Promise<Session | null>;
  verifyToken(jwt: string): Promise<SignInClaims>;
  close(): Promise<void>;
}

export function createAuthServer(options: AuthServerOptions = optionsFromEnv()): AuthServer {
  const handler = createAuthHandler(options);
  const sessions = new SessionReader(options.cookieSecret, options.databaseUrl, options.absoluteSessionDays ?? 30);
  const verify = createTokenVerifier(options.baseUrl, options.jwksUrl ?? `${options.baseUrl.replace(/\/+$/, '')}/jwks`);
  return {
    handler,
    express: expressHandler(handler),
    getSession: (source) => sessions.getSession(source),
    verifyToken: verify,
    close: () => sessions.close(),
  };
}

let fromEnv: AuthServer | undefined;
const shared = () => (fromEnv ??= createAuthServer());

/** `getSession(request)` configured from the injected variables. */
export function getSession(source: CookieSource): Promise<Session | null> {
  return shared().getSession(source);
}

/** `verifyToken(jwt)` against SERVICE_AUTH_JWKS_URL. */
export function verifyToken(jwt: string): Promise<SignInClaims> {
  return shared().verifyToken(jwt);
}

/** `handler(request)` forwarding to SERVICE_AUTH_BASE_URL, mounted at /api/auth. */
export function handler(request: Request, context?: Parameters<AuthHandler>[1]): Promise<Response> {
  return shared().handler(request, context);
}
