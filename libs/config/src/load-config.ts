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
    const got = raw === undefined ? ' (not set)' : isSecretName(variable) ? '' : ` (got ${JSON.stringify(raw)})`;
    return `${variable}: ${issue.message}${got}`;
  });
  throw new ConfigError(problems.join('; '));
}

function isSecretName(name: string): boolean {
  return /KEY|SECRET|PASSWORD|TOKEN/.test(name);
}
