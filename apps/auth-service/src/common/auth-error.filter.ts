import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { AuthError } from './auth-error.js';

/** Writes AuthError in Better Auth's shape; anything else goes on to the platform's global filter. */
@Catch(AuthError)
export class AuthErrorFilter implements ExceptionFilter {
  catch(error: AuthError, host: ArgumentsHost): void {
    sendAuthError(host.switchToHttp().getResponse<Response>(), error);
  }
}

export function sendAuthError(res: Response, error: AuthError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status).json(error.body);
}
