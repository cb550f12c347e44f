import { baseServerFields, loadConfig, masterKey, port, publicUrlFields, z } from '@slipway/config';

export const authConfigSchema = z.object({
  ...baseServerFields,
  ...publicUrlFields,
  PORT: port(3001),
  SLIPWAY_MASTER_KEY: masterKey,
});

export type AuthConfig = z.output<typeof authConfigSchema>;

/** The only place this app reads the environment. */
export function loadAuthConfig(env: NodeJS.ProcessEnv = process.env): AuthConfig {
  return loadConfig(authConfigSchema, env);
}

export const AUTH_CONFIG = Symbol('AUTH_CONFIG');
