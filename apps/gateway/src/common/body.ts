import { ApiException, nulPath } from '@slipway/service-kit';
import type { z } from 'zod';

/**
 * Parses a JSON body with a zod schema; the first problem becomes a `bad_request` message. A NUL
 * (U+0000) in what the schema kept is one too: Postgres `text` and `jsonb` cannot hold it.
 */
export function parseBody<T extends z.ZodType>(schema: T, body: unknown, hint: string): z.output<T> {
  const parsed = schema.safeParse(body ?? {});
  if (parsed.success) {
    const nul = nulPath(parsed.data);
    if (nul) throw new ApiException('bad_request', `${nul.length ? `${nul.join('.')}: ` : ''}must not contain the NUL character (U+0000). ${hint}`);
    return parsed.data;
  }
  const issue = parsed.error.issues[0];
  const field = issue?.path.length ? `${issue.path.join('.')}: ` : '';
  throw new ApiException('bad_request', `${field}${issue?.message ?? 'invalid body'}. ${hint}`);
}
