import type { Request } from 'express';
import type { Tenant } from '../tenants/index.js';

/** A request under `/a/{slug}` after the pipeline resolved its tenant and client address. */
export interface AuthRequest extends Request {
  tenant: Tenant;
  clientIp: string;
}

export interface RequestMeta {
  ip: string;
  userAgent: string | null;
  cookieHeader: string | undefined;
}

export function requestMeta(req: AuthRequest): RequestMeta {
  return { ip: req.clientIp, userAgent: req.headers['user-agent'] ?? null, cookieHeader: req.headers.cookie };
}
