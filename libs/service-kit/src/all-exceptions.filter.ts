import { randomUUID } from 'node:crypto';
import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { ERROR_CODES, documentationUrl, type ErrorCode } from '@slipway/contract';
import type { Request, Response } from 'express';
import { ApiException } from './api.exception.js';
import { serverUnavailable } from './server-unavailable.js';

const STATUS_CODES: Record<number, ErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  413: 'too_large',
  429: 'rate_limited',
  503: 'unavailable',
};

/**
 * Maps every failure to the contract's `{error, code, documentation}` body. Anything unexpected
 * becomes a 500 carrying a correlation id: the stack goes to the log under that id, never to
 * the client.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  constructor(private readonly baseUrl: string) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const response = http.getResponse<Response>();
    const request = http.getRequest<Request>();
    if (response.headersSent) {
      response.end();
      return;
    }
    if (exception instanceof ApiException) {
      response
        .status(exception.status)
        .set(exception.headers)
        .json({
          error: exception.message,
          code: exception.code,
          documentation: documentationUrl(this.baseUrl, exception.code),
          ...exception.extras,
        });
      return;
    }
    if (exception instanceof HttpException && exception.getStatus() < 500) {
      const original = exception.getStatus();
      const code = STATUS_CODES[original] ?? 'bad_request';
      // The status always agrees with the code's documented status (e.g. a body parser's 413 is
      // the contract's `400 too_large`), so clients can rely on the published pairs.
      const status = ERROR_CODES[code].status;
      const message = original === 404 ? `No route for ${request.method} ${request.path}` : httpMessage(exception);
      response.status(status).json({ error: message, code, documentation: documentationUrl(this.baseUrl, code) });
      return;
    }
    const correlationId = randomUUID();
    if (serverUnavailable(exception)) {
      // Postgres or Redis restarting: nothing was accepted, and a retry in a moment will do.
      this.logger.warn(`[${correlationId}] ${request.method} ${request.path}: a dependency is not answering (${describe(exception).split('\n')[0]})`);
      response.status(503).set({ 'x-correlation-id': correlationId, 'retry-after': '2' }).json(unavailableBody(this.baseUrl, correlationId));
      return;
    }
    this.logger.error(`[${correlationId}] ${request.method} ${request.path} failed: ${describe(exception)}`);
    response
      .status(500)
      .set('x-correlation-id', correlationId)
      .json({
        error: `Something went wrong on our side. Quote correlation id ${correlationId} when reporting it.`,
        code: 'internal',
        documentation: documentationUrl(this.baseUrl, 'internal'),
        correlationId,
      });
  }
}

/** The contract's 503 `unavailable` body for a dependency that is not answering. */
export function unavailableBody(baseUrl: string, correlationId: string): Record<string, string> {
  return {
    error: 'A service the platform depends on (its database or Redis) is not answering right now; nothing was accepted. Retry in a few seconds.',
    code: 'unavailable',
    documentation: documentationUrl(baseUrl, 'unavailable'),
    correlationId,
  };
}

function httpMessage(exception: HttpException): string {
  // JSON.parse messages quote a slice of the body, which may hold a secret: never echo them.
  if (exception.cause instanceof SyntaxError) return 'The body is not valid JSON.';
  const body = exception.getResponse();
  if (typeof body === 'string') return body;
  const message = (body as { message?: unknown }).message;
  return Array.isArray(message) ? message.join('; ') : typeof message === 'string' ? message : exception.message;
}

function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
