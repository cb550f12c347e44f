import { z } from 'zod';

/** Reusable environment fields. Apps compose their own schema from these. */
export const postgresUrl = z.string({ error: 'is required' }).refine((v) => /^postgres(ql)?:\/\//.test(v), 'must be a postgres:// or postgresql:// URL');

export const redisUrl = z
  .string()
  .refine((v) => /^rediss?:\/\//.test(v), 'must be a redis:// or rediss:// URL')
  .default('redis://127.0.0.1:6379');

export const port = (fallback: number) =>
  z.coerce
    .number()
    .int('must be a whole number')
    .min(0, 'must be a port (0-65535, 0 = any free port)')
    .max(65535, 'must be a port (0-65535, 0 = any free port)')
    .default(fallback);

export const httpUrl = (fallback: string) =>
  z
    .string()
    .refine((v) => /^https?:\/\/[^/]+/.test(v), 'must be an http:// or https:// URL')
    .transform((v) => v.replace(/\/+$/, ''))
    .default(fallback);

/** 32 random bytes, base64 (or base64url). Encrypts secrets, cookie secrets and signing keys at rest. */
export const masterKey = z
  .string({ error: 'is required (32 random bytes, base64: `openssl rand -base64 32`)' })
  .refine((v) => Buffer.from(v, 'base64').length === 32, 'must be 32 bytes encoded as base64 (`openssl rand -base64 32`)');

export const logLevel = z.enum(['error', 'warn', 'log', 'debug', 'verbose']).default('log');

export const host = z.string().min(1).default('0.0.0.0');

/** Milliseconds an app waits for Postgres and Redis at boot before giving up with a one-line reason. */
export const startupTimeoutMs = z.coerce.number().int().min(0).default(10_000);

/** The fields every server process shares. */
export const baseServerFields = {
  DATABASE_URL: postgresUrl,
  REDIS_URL: redisUrl,
  HOST: host,
  LOG_LEVEL: logLevel,
  STARTUP_TIMEOUT_MS: startupTimeoutMs,
  /** Set by `pnpm start`: a service exits when its launcher is gone, so nothing is left behind. */
  SLIPWAY_LAUNCHER_PID: z.coerce.number().int().positive().optional(),
  /**
   * Set by `pnpm start`: listening sockets the launcher holds and handed to this process, by role
   * (`http=3`); the process accepts on the inherited descriptor instead of binding PORT itself
   * (libs/service-kit listen-fds.ts).
   */
  SLIPWAY_LISTEN_FDS: z.string().optional(),
  /**
   * Set by `pnpm start`: how many processes of this service serve its socket side by side. Budgets
   * sized for the service (database connections) are divided by it, so N processes hold what one did.
   */
  SLIPWAY_SERVICE_PROCESSES: z.coerce.number().int().min(1).max(64).default(1),
};

/** This process's share of a budget sized for the whole service: ⌊total / processes⌋, at least `min`. */
export function processShare(total: number, processes: number, min = 1): number {
  return Math.max(min, Math.floor(total / processes));
}

export const publicUrlFields = {
  /** The platform address `{base_url}` as users see it. */
  PUBLIC_URL: httpUrl('http://localhost:3000'),
  /** The sign-in service's public origin; `{auth_url}` = `${AUTH_PUBLIC_URL}/a/{slug}`. */
  AUTH_PUBLIC_URL: httpUrl('http://localhost:3001'),
  /** Publishing domains, comma separated; the first is the primary one. */
  APPS_DOMAIN: z
    .string()
    .default('localhost:8080')
    .transform((v) =>
      v
        .split(',')
        .map((d) => d.trim().toLowerCase())
        .filter(Boolean),
    )
    .refine((list) => list.length > 0, 'must list at least one domain'),
  /** Scheme used for application addresses under the publishing domains. */
  APPS_SCHEME: z.enum(['http', 'https']).default('http'),
};

/**
 * A variable read by a parser of its own (`plan=size` pairs, …): the parser's error becomes the
 * variable's message. Unset reaches the parser as `undefined` (its defaults).
 */
export const parsedBy = <T>(parse: (text: string | undefined) => T) =>
  z
    .string()
    .optional()
    .transform((text, ctx) => {
      try {
        return parse(text);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    });
