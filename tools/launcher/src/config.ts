import { httpUrl, loadConfig, port, z } from '@slipway/config';

/** The launcher's own environment: everything optional, embedded defaults otherwise. */
export const launcherConfigSchema = z.object({
  DATABASE_URL: z
    .string()
    .refine((v) => /^postgres(ql)?:\/\//.test(v), 'must be a postgres:// or postgresql:// URL')
    .optional(),
  REDIS_URL: z
    .string()
    .refine((v) => /^rediss?:\/\//.test(v), 'must be a redis:// or rediss:// URL')
    .optional(),
  SLIPWAY_MASTER_KEY: z.string().optional(),
  SLIPWAY_HOME: z.string().optional(),
  SLIPWAY_PG_PORT: port(54329),
  GATEWAY_PORT: port(3000),
  AUTH_PORT: port(3001),
  EDGE_PORT: port(8080),
  BUILD_WORKER_PORT: port(3003),
  PUBLIC_URL: httpUrl('http://localhost:3000'),
  AUTH_PUBLIC_URL: httpUrl('http://localhost:3001'),
  APPS_DOMAIN: z.string().default('localhost:8080'),
  APPS_SCHEME: z.enum(['http', 'https']).default('http'),
  READY_TIMEOUT_MS: z.coerce.number().int().min(1000).default(90_000),
  LOG_LEVEL: z.string().default('log'),
  /** Who serves the apps on EDGE_PORT: `nginx` (the default; run by the runtime supervisor, programmed by the edge) or `node` (the Node edge alone). */
  EDGE_DATA_PLANE: z.enum(['nginx', 'node']).default('nginx'),
  /** The build worker's setting, checked before anything starts (`auto` = `on`). */
  BUILD_SANDBOX: z
    .enum(['on', 'auto', 'off'])
    .default('on')
    .transform((value) => (value === 'off' ? 'off' : 'on')),
});

export type LauncherConfig = z.output<typeof launcherConfigSchema>;

export function loadLauncherConfig(env: NodeJS.ProcessEnv = process.env): LauncherConfig {
  return loadConfig(launcherConfigSchema, env);
}
