import { baseServerFields, loadConfig, masterKey, port, publicUrlFields, z } from '@slipway/config';

export const gatewayConfigSchema = z.object({
  ...baseServerFields,
  ...publicUrlFields,
  PORT: port(3000),
  SLIPWAY_MASTER_KEY: masterKey,
});

export type GatewayConfig = z.output<typeof gatewayConfigSchema>;

/** The only place this app reads the environment. */
export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  return loadConfig(gatewayConfigSchema, env);
}

export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');
