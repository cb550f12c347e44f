import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Response } from 'express';
import { createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { documentationUrl } from '@slipway/contract';
import { AUTH_CONFIG, type AuthConfig } from '../config.js';
import { AuthError, serverUnavailable } from '../common/index.js';
import { unavailableBody } from '@slipway/service-kit';
import { AuthPipelineMiddleware, requestMeta, type AuthRequest } from '../pipeline/index.js';
import { SessionsService } from './sessions.service.js';

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/** Exactly `GET /a/{slug}/get-session` or `/token`: anything else (query, trailing slash) goes through Nest. */
const HOT_PATH = /^\/a\/[a-z0-9-]{1,63}\/(get-session|token)$/;

/**
 * The two hottest reads — every page load of a signed-in user — answered by a plain Node
 * request listener placed in front of Express and Nest's router, which cost more per request
 * than the work itself. It runs the same pipeline (tenant, CORS, rate limit) and the same
 * SessionsService calls as the Nest routes, and writes the same status, headers (ETag included)
 * and JSON bodies as Express does. Conditional requests fall through to Express (its 304s).
 */
@Injectable()
export class SessionReadsFastPath implements OnApplicationBootstrap {
  private readonly logger = new Logger('SessionReadsFastPath');
  /** Requests this listener answered (tests check the fast path was really taken). */
  served = 0;

  constructor(
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
    private readonly adapterHost: HttpAdapterHost,
    private readonly pipeline: AuthPipelineMiddleware,
    private readonly sessions: SessionsService,
  ) {}

  onApplicationBootstrap(): void {
    const server = this.adapterHost.httpAdapter.getHttpServer() as Server;
    const downstream = server.listeners('request') as RequestListener[];
    server.removeAllListeners('request');
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (this.accepts(req)) {
        this.served++;
        void this.answer(req as AuthRequest, res);
        return;
      }
      for (const listener of downstream) listener.call(server, req, res);
    });
  }

  private accepts(req: IncomingMessage): boolean {
    return req.method === 'GET' && HOT_PATH.test(req.url ?? '') && req.headers['if-none-match'] === undefined && req.headers['if-modified-since'] === undefined;
  }

  private async answer(req: AuthRequest, res: ServerResponse): Promise<void> {
    try {
      req.originalUrl = req.url;
      if (!(await this.pipeline.run(req, res as Response))) return;
      const meta = requestMeta(req);
      const result = req.url.endsWith('/token') ? await this.sessions.token(req.tenant, meta) : await this.sessions.getSession(req.tenant, meta);
      if (result.cookies?.length) res.appendHeader('Set-Cookie', result.cookies);
      for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
      // `null` is written as JSON `null` (Better Auth's client reads it as "no session").
      send(res, 200, result.body === null ? 'null' : JSON.stringify(result.body));
    } catch (error) {
      this.fail(req, res, error);
    }
  }

  /** AuthErrorFilter's answer for AuthError; the platform filter's 500 with a correlation id otherwise. */
  private fail(req: IncomingMessage, res: ServerResponse, error: unknown): void {
    if (res.headersSent) {
      res.end();
      return;
    }
    if (error instanceof AuthError) {
      for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
      send(res, error.status, JSON.stringify(error.body));
      return;
    }
    const correlationId = randomUUID();
    if (serverUnavailable(error)) {
      this.logger.warn(
        `[${correlationId}] ${req.method} ${req.url}: a dependency is not answering (${error instanceof Error ? error.message : String(error)})`,
      );
      res.setHeader('x-correlation-id', correlationId);
      res.setHeader('retry-after', '2');
      send(res, 503, JSON.stringify(unavailableBody(this.config.PUBLIC_URL, correlationId)));
      return;
    }
    this.logger.error(`[${correlationId}] ${req.method} ${req.url} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    res.setHeader('x-correlation-id', correlationId);
    const body = {
      error: `Something went wrong on our side. Quote correlation id ${correlationId} when reporting it.`,
      code: 'internal',
      documentation: documentationUrl(this.config.PUBLIC_URL, 'internal'),
      correlationId,
    };
    send(res, 500, JSON.stringify(body));
  }
}

/** What Express's res.json writes: charset, length and its default weak ETag (the `etag` package's). */
function send(res: ServerResponse, status: number, json: string): void {
  const body = Buffer.from(json, 'utf8');
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', body.length);
  res.setHeader('ETag', `W/"${body.length.toString(16)}-${createHash('sha1').update(body).digest('base64').slice(0, 27)}"`);
  res.end(body);
}
