import type { z } from 'zod';

/** Thrown when the environment does not satisfy an app's config schema. One line, no stack. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Validates the environment once, at boot. The first problem is reported naming the variable,
 * e.g. `REDIS_URL: must be a redis:// or rediss:// URL (got "nope")`.
 */
export function loadConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.output<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const variable = issue.path.join('.') || '(environment)';
    const raw = issue.path.length === 1 ? env[String(issue.path[0])] : undefined;
    const got = raw === undefined ? ' (not set)' : isSecretName(variable) ? '' : ` (got ${JSON.stringify(withoutUrlCredentials(raw))})`;
    return `${variable}: ${issue.message}${got}`;
  });
  throw new ConfigError(problems.join('; '));
}

/** `scheme://user:password@host` → `scheme://***@host`: URLs may carry credentials (DATABASE_URL, S3_ENDPOINT). */
function withoutUrlCredentials(value: string): string {
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/).*@/i, '$1***@');
}

function isSecretName(name: string): boolean {
  return /KEY|SECRET|PASSWORD|TOKEN/.test(name);
}
