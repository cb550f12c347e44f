/** Default ports of the platform's processes (ARCHITECTURE.md). */
export const DEFAULT_PORTS = {
  gateway: 3000,
  'auth-service': 3001,
  'build-worker': 3003,
  edge: 8080,
} as const;

export type ServiceName = keyof typeof DEFAULT_PORTS;
export const SERVICE_NAMES = Object.keys(DEFAULT_PORTS) as ServiceName[];
