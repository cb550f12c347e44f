import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { CLIENT_ADDRESS_HEADER, verifyClientAddress } from '@slipway/sign-in-sdk';
import { clientAddress, normaliseIp, nulPath } from '@slipway/service-kit';
import { AUTH_CONFIG, type AuthConfig } from '../config.js';
import { AuthError, AuthErrors, sendAuthError } from '../common/index.js';
import { clearedSessionCookie, hasAmbiguousSessionCookie } from '../cookies/index.js';
import { canonicalPath } from '../routing/index.js';
import { TenantsService } from '../tenants/index.js';
import type { AuthRequest } from './auth-request.js';
import { assertTrustedOrigin, isTrustedOrigin } from './origin-check.js';
import { checkedRedirectTargets } from './redirect-targets.js';
import { RateLimitService, bucketFor } from './rate-limit.service.js';

const TENANT_PATH = /^\/a\/([a-z0-9-]{1,63})(\/.*)?$/;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Runs before every `/a/{slug}/…` route: resolves the tenant, answers CORS for its trusted
 * origins, rate limits (before the origin check, as Better Auth does), then refuses changes
 * from untrusted origins and redirect targets outside the tenant (normalised in place for the handlers).
 */
@Injectable()
export class AuthPipelineMiddleware implements NestMiddleware {
  constructor(
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
    private readonly tenants: TenantsService,
    private readonly rateLimit: RateLimitService,
  ) {}

  use(req: Request, res: Response, next: NextFunction): void {
    this.run(req as AuthRequest, res).then(
      (proceed) => (proceed ? next() : undefined),
      (error: unknown) => (error instanceof AuthError ? sendAuthError(res, error) : next(error)),
    );
  }

  /**
   * The pipeline itself; SessionReadsFastPath also runs it on plain Node requests (GET, no query
   * string): read `req.headers`/`req.socket` here, not Express helpers (`req.get`, `req.ip`).
   */
  async run(req: AuthRequest, res: Response): Promise<boolean> {
    // Any other spelling of a path (case aside, which the router handles) never reaches a handler,
    // so it cannot count against another bucket than the handler's own.
    const path = canonicalPath(req.originalUrl);
    const match = path === null ? null : TENANT_PATH.exec(path);
    if (!match) throw new AuthError(404, 'NOT_FOUND', 'Not found');
    const tenant = await this.tenants.resolve(match[1]!);
    req.tenant = tenant;
    req.clientIp = clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'], this.config.AUTH_TRUSTED_PROXIES);
    // The application's own server (@slipway/sign-in-sdk) vouches for its visitor's address with an
    // HMAC under the tenant's cookie secret, so visitors behind one app server get their own allowance.
    const vouched = verifyClientAddress(tenant.cookieSecret, req.headers[CLIENT_ADDRESS_HEADER]);
    if (vouched) req.clientIp = normaliseIp(vouched);

    const origin = req.headers.origin;
    if (origin && origin !== 'null' && isTrustedOrigin(tenant, origin)) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
      res.setHeader('Access-Control-Expose-Headers', 'set-auth-jwt, x-retry-after');
    }
    res.setHeader('Vary', 'Origin');
    // Two session cookies (one tossed by a sibling host): the request is signed out and ours is cleared.
    if (hasAmbiguousSessionCookie(req.headers.cookie)) res.appendHeader('Set-Cookie', clearedSessionCookie(tenant));
    if (req.method === 'OPTIONS') {
      if (res.hasHeader('Access-Control-Allow-Origin')) {
        res.setHeader('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
        res.setHeader('Access-Control-Allow-Headers', req.headers['access-control-request-headers'] ?? 'content-type, authorization');
        res.setHeader('Access-Control-Max-Age', '600');
      }
      res.status(204).end();
      return false;
    }

    await this.rateLimit.consume(bucketFor(match[2] ?? '/'), tenant.applicationId, req.clientIp);
    if (!SAFE_METHODS.has(req.method)) assertTrustedOrigin(tenant, origin);
    const nul = nulField(req);
    if (nul) throw AuthErrors.validation(`[${nul}] must not contain the NUL character (U+0000)`);
    if (!SAFE_METHODS.has(req.method)) {
      if (req.body && typeof req.body === 'object') Object.assign(req.body, checkedRedirectTargets(tenant, req.body as Record<string, unknown>));
    }
    if (req.method === 'GET' && req.query) replaceQuery(req, checkedRedirectTargets(tenant, req.query as Record<string, unknown>));
    return true;
  }
}

/**
 * Handlers read the normalised targets, never the raw ones. Express 5's `req.query` is a getter
 * that parses the URL again on every read, so the checked copy is set as the request's own property.
 */
function replaceQuery(req: AuthRequest, targets: Record<string, string>): void {
  if (Object.keys(targets).length === 0) return;
  Object.defineProperty(req, 'query', { value: { ...req.query, ...targets }, writable: true, configurable: true, enumerable: true });
}

const NUL_IN_URL = /%00/i;

/**
 * Where a NUL (U+0000) is in the request, if anywhere: the path or query string (`%00`), or a key
 * or string of the JSON body (`body.name`). Postgres `text` and `jsonb` cannot hold it, so a
 * handler storing or looking one up would fail with a 500; refused as invalid instead, before any
 * handler runs.
 */
export function nulField(req: { originalUrl?: string; url?: string; body?: unknown }): string | null {
  if (NUL_IN_URL.test(req.originalUrl ?? req.url ?? '')) return 'url';
  const path = nulPath(req.body);
  return path ? ['body', ...path].join('.') : null;
}
