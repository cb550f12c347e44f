import { baseServerFields, loadConfig, masterKey, port, publicUrlFields, z } from '@slipway/config';

export const workerConfigSchema = z.object({
  ...baseServerFields,
  ...publicUrlFields,
  PORT: port(3003),
  SLIPWAY_MASTER_KEY: masterKey,
});

export type WorkerConfig = z.output<typeof workerConfigSchema>;

/** The only place this app reads the environment. */
export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  return loadConfig(workerConfigSchema, env);
}

export const WORKER_CONFIG = Symbol('WORKER_CONFIG');
