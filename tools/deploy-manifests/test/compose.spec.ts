import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_PORTS, SERVICE_NAMES } from '@slipway/contract';
import { parse } from 'yaml';
import { REPO_ROOT } from '../src/paths.js';

interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  read_only?: boolean;
  cap_drop?: string[];
}

const COMPOSE_FILE = join(REPO_ROOT, 'docker-compose.yml');
const compose = parse(readFileSync(COMPOSE_FILE, 'utf8'), { merge: true }) as { services: Record<string, ComposeService> };
const services = compose.services;
const REQUIRED_ENV = ['DATABASE_URL', 'REDIS_URL', 'SLIPWAY_MASTER_KEY', 'PUBLIC_URL', 'AUTH_PUBLIC_URL', 'APPS_DOMAIN', 'APPS_SCHEME', 'PORT', 'LOG_LEVEL'];

describe('docker-compose.yml', () => {
  it('has Postgres, Redis, an SMTP catcher, the migration step and the four services', () => {
    expect(Object.keys(services).sort()).toEqual(['mailpit', 'migrate', 'postgres', 'redis', ...SERVICE_NAMES].sort());
  });

  it('runs Redis with AOF and noeviction', () => {
    const command = services['redis']!.command!.join(' ');
    expect(command).toContain('--appendonly yes');
    expect(command).toContain('--maxmemory-policy noeviction');
  });

  it('gives every long-running service a healthcheck', () => {
    const without = Object.entries(services)
      .filter(([name, service]) => name !== 'migrate' && (service.healthcheck?.test?.length ?? 0) < 2)
      .map(([name]) => name);
    expect(without).toEqual([]);
  });

  it('runs each platform service from the one image with its command, port, environment and readiness check', () => {
    for (const name of SERVICE_NAMES) {
      const service = services[name]!;
      expect(service.image).toBe(services['migrate']!.image);
      expect(service.build).toBe('.');
      expect(service.command).toEqual(['node', `apps/${name}/dist/main.js`]);
      expect(existsSync(join(REPO_ROOT, 'apps', name, 'src', 'main.ts'))).toBe(true);
      expect(Object.keys(service.environment ?? {})).toEqual(expect.arrayContaining(REQUIRED_ENV));
      expect(service.environment!['PORT']).toBe(String(DEFAULT_PORTS[name]));
      expect(service.healthcheck!.test.join(' ')).toContain(`http://127.0.0.1:${DEFAULT_PORTS[name]}/health/ready`);
      expect(service.read_only).toBe(true);
      expect(service.cap_drop).toEqual(['ALL']);
    }
    expect(services['migrate']!.command).toEqual(['node', 'apps/launcher/dist/migrate.js']);
  });

  it('starts services only after healthy Postgres and Redis and completed migrations', () => {
    for (const name of SERVICE_NAMES) {
      expect(services[name]!.depends_on).toMatchObject({
        postgres: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
        migrate: { condition: 'service_completed_successfully' },
      });
    }
    expect(services['migrate']!.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
  });

  it('waits only on services that exist and can report what it waits for, without cycles', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const [dependency, { condition }] of Object.entries(service.depends_on ?? {})) {
        expect({ name, dependency, exists: dependency in services }).toEqual({ name, dependency, exists: true });
        if (condition === 'service_healthy') expect(services[dependency]!.healthcheck).toBeDefined();
        if (condition === 'service_completed_successfully') expect(services[dependency]!.healthcheck).toBeUndefined();
      }
    }
    const visiting = new Set<string>();
    const visit = (name: string, path: string[]): void => {
      if (path.includes(name)) throw new Error(`dependency cycle: ${[...path, name].join(' -> ')}`);
      if (visiting.has(name)) return;
      visiting.add(name);
      for (const dependency of Object.keys(services[name]!.depends_on ?? {})) visit(dependency, [...path, name]);
    };
    for (const name of Object.keys(services)) expect(() => visit(name, [])).not.toThrow();
  });

  const composeCli = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' });
  const hasComposeCli = composeCli.status === 0;
  if (!hasComposeCli) {
    process.stdout.write('skipping `docker compose config -q`: the docker compose CLI plugin is not installed here\n');
  }
  (hasComposeCli ? it : it.skip)('is accepted by `docker compose config -q`', () => {
    const result = spawnSync('docker', ['compose', '-f', COMPOSE_FILE, 'config', '-q'], {
      encoding: 'utf8',
      env: { ...process.env, SLIPWAY_MASTER_KEY: Buffer.alloc(32, 1).toString('base64') },
    });
    expect({ status: result.status, stderr: result.stderr.trim() }).toEqual({ status: 0, stderr: '' });
  });
});
