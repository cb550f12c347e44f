import { ApiException } from '@slipway/service-kit';
import type { z } from 'zod';

/** Parses a JSON body with a zod schema; the first problem becomes a `bad_request` message. */
export function parseBody<T extends z.ZodType>(schema: T, body: unknown, hint: string): z.output<T> {
  const parsed = schema.safeParse(body ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.length ? `${issue.path.join('.')}: ` : '';
  throw new ApiException('bad_request', `${field}${issue?.message ?? 'invalid body'}. ${hint}`);
}
