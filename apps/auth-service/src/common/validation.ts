import { z } from '@slipway/config';
import { AuthErrors } from './auth-error.js';

/** Parses a request body like better-call does: 400 VALIDATION_ERROR "[body.field] reason" (INVALID_EMAIL for emails). */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  if (issue.message === 'Invalid email') throw AuthErrors.invalidEmail();
  throw AuthErrors.validation(`[body.${issue.path.join('.')}] ${issue.message}`);
}

export const optionalUrl = z.string().max(2048).optional();
