/**
 * What the hostile tenant is told (where the platform keeps things, what to look for, which ports
 * to try) and what the test expects of each attempt. The needles travel hex-encoded, so the
 * tenant's own files never hold them.
 */
export type Reach = 'blocked' | 'allowed' | 'public';

export interface TcpTarget {
  name: string;
  host: string;
  port: number;
  kind: 'redis' | 'pg' | 'http' | 'tcp';
  /** From the running app. `public`: the platform's public addresses, an app may reach them (not asserted). */
  app: Reach;
  /** From preinstall, postinstall and build. */
  build: Reach;
}

export interface Needles {
  masterKey: string;
  postgresPassword: string;
  neighbourSecret: string;
  neighbourSource: string;
}

export interface Targets {
  home: string;
  needles: Record<keyof Needles, string>;
  tcp: TcpTarget[];
  neighbourPids: number[];
  ownApplicationId: string;
  neighbourApplicationId: string;
  platformDatabase: string;
  neighbourDatabase: string | null;
}

export interface TargetInput {
  home: string;
  needles: Needles;
  redisUrl: string;
  ports: { gateway: number; auth: number; edge: number; worker: number; postgres: number; pgbouncer: number };
  neighbourPort: number;
  hostAddresses: string[];
  neighbourPids: number[];
  ownApplicationId: string;
  neighbourApplicationId: string;
  neighbourDatabase: string | null;
}

const hex = (value: string) => Buffer.from(value, 'utf8').toString('hex');

export function buildTargets(input: TargetInput): Targets {
  const redis = new URL(input.redisUrl);
  const redisPort = Number(redis.port || 6379);
  // Same port list on loopback and on every address of the machine.
  const ports: Omit<TcpTarget, 'host'>[] = [
    { name: 'launcher redis', port: redisPort, kind: 'redis', app: 'blocked', build: 'blocked' },
    ...(redisPort === 6379 ? [] : [{ name: 'machine redis', port: 6379, kind: 'redis' as const, app: 'blocked' as const, build: 'blocked' as const }]),
    // Apps never reach the platform's Postgres (issue 27): an app with a database reaches PgBouncer.
    { name: 'embedded postgres', port: input.ports.postgres, kind: 'pg', app: 'blocked', build: 'blocked' },
    { name: 'pgbouncer', port: input.ports.pgbouncer, kind: 'pg', app: 'allowed', build: 'blocked' },
    { name: 'machine postgres', port: 5432, kind: 'pg', app: 'blocked', build: 'blocked' },
    { name: 'gateway', port: input.ports.gateway, kind: 'http', app: 'public', build: 'blocked' },
    { name: 'auth-service', port: input.ports.auth, kind: 'http', app: 'public', build: 'blocked' },
    { name: 'edge', port: input.ports.edge, kind: 'http', app: 'public', build: 'blocked' },
    { name: 'build-worker', port: input.ports.worker, kind: 'http', app: 'blocked', build: 'blocked' },
    { name: 'neighbour app port', port: input.neighbourPort, kind: 'http', app: 'blocked', build: 'blocked' },
  ];
  const tcp: TcpTarget[] = [];
  for (const target of ports) {
    tcp.push({ ...target, name: `${target.name} (127.0.0.1)`, host: '127.0.0.1' });
    for (const address of input.hostAddresses) {
      // The app's own database is reached on loopback; on the machine's address, nothing of the platform's data is.
      const app = target.kind === 'pg' ? 'blocked' : target.app;
      tcp.push({ ...target, app, name: `${target.name} (${address})`, host: address });
    }
  }
  tcp.push({ name: 'registry.npmjs.org:443 (the outside world)', host: 'registry.npmjs.org', port: 443, kind: 'tcp', app: 'allowed', build: 'allowed' });
  return {
    home: input.home,
    needles: {
      masterKey: hex(input.needles.masterKey),
      postgresPassword: hex(input.needles.postgresPassword),
      neighbourSecret: hex(input.needles.neighbourSecret),
      neighbourSource: hex(input.needles.neighbourSource),
    },
    tcp,
    neighbourPids: input.neighbourPids,
    ownApplicationId: input.ownApplicationId,
    neighbourApplicationId: input.neighbourApplicationId,
    platformDatabase: 'slipway',
    neighbourDatabase: input.neighbourDatabase,
  };
}
