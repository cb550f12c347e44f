import { baseServerFields, loadConfig, masterKey, port, publicUrlFields, z } from '@slipway/config';

export const edgeConfigSchema = z.object({
  ...baseServerFields,
  ...publicUrlFields,
  PORT: port(8080),
  SLIPWAY_MASTER_KEY: masterKey,
});

export type EdgeConfig = z.output<typeof edgeConfigSchema>;

/** The only place this app reads the environment. */
export function loadEdgeConfig(env: NodeJS.ProcessEnv = process.env): EdgeConfig {
  return loadConfig(edgeConfigSchema, env);
}

export const EDGE_CONFIG = Symbol('EDGE_CONFIG');
