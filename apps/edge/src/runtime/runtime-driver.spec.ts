import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@slipway/config';
import { createBlobStore } from '@slipway/blob';
import { appHostPorts } from '@slipway/data-plane';
import { releaseArtifactToken } from '@slipway/messaging';
import { LocalDriver } from '@slipway/runtime';
import { loadEdgeConfig } from '../config.js';
import { createRuntimeDriver } from './runtime-driver.js';

const masterKey = randomBytes(32).toString('base64');
const base = { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/x', REDIS_URL: 'redis://127.0.0.1:6379', SLIPWAY_MASTER_KEY: masterKey };

describe('SLIPWAY_RUNTIME_DRIVER', () => {
  it('defaults to local, and refuses an unknown driver or kubernetes without the artifact URL in one line', () => {
    expect(loadEdgeConfig(base).SLIPWAY_RUNTIME_DRIVER).toBe('local');
    const bad = (() => {
      try {
        loadEdgeConfig({ ...base, SLIPWAY_RUNTIME_DRIVER: 'docker' });
      } catch (error) {
        return error as Error;
      }
      return undefined;
    })();
    expect(bad).toBeInstanceOf(ConfigError);
    expect(bad!.message).toMatch(/^SLIPWAY_RUNTIME_DRIVER: .*"local".*"kubernetes".* \(got "docker"\)$/);
    expect(bad!.message).not.toContain('\n');
    expect(() => loadEdgeConfig({ ...base, SLIPWAY_RUNTIME_DRIVER: 'kubernetes' })).toThrow(
      /^SLIPWAY_RUNTIME_EDGE_URL: required when SLIPWAY_RUNTIME_DRIVER=kubernetes/,
    );
    expect(loadEdgeConfig({ ...base, SLIPWAY_RUNTIME_DRIVER: 'kubernetes', SLIPWAY_RUNTIME_EDGE_URL: 'http://edge.slipway.svc:8080' })).toMatchObject({
      SLIPWAY_RUNTIME_DRIVER: 'kubernetes',
      SLIPWAY_RUNTIME_NAMESPACE: 'slipway-apps',
    });
  });

  it("sandboxes apps unless the operator turns it off, and derives what apps may reach from the platform's own addresses only", () => {
    expect(loadEdgeConfig(base)).toMatchObject({ RUNTIME_SANDBOX: 'on', RUNTIME_MEMORY_MB: 512, RUNTIME_PIDS: 256, RUNTIME_CPUS: 1, RUNTIME_TMP_MB: 64 });
    expect(() => loadEdgeConfig({ ...base, RUNTIME_SANDBOX: 'auto' })).toThrow(/^RUNTIME_SANDBOX: .*"on".*"off"/);
    const config = loadEdgeConfig({
      ...base,
      PORT: '8080',
      PUBLIC_URL: 'http://localhost:3000',
      AUTH_PUBLIC_URL: 'http://127.0.0.1:3001',
      DATABASE_URL: 'postgresql://slipway:pw@127.0.0.1:54329/slipway',
      REDIS_URL: 'redis://127.0.0.1:6379',
    });
    // Never the platform's Postgres (issue 27): an app with a database reaches PgBouncer instead, per release.
    expect(appHostPorts(config).sort((a, b) => a - b)).toEqual([3000, 3001, 8080]);
    // Public addresses on other hosts are reached over the outside network, not forwarded.
    expect(
      appHostPorts(
        loadEdgeConfig({
          ...base,
          PORT: '8080',
          PUBLIC_URL: 'https://slipway.example.com',
          AUTH_PUBLIC_URL: 'https://auth.example.com',
          DATABASE_URL: 'postgresql://x@db.internal:5432/slipway',
        }),
      ),
    ).toEqual([8080]);
  });

  describe('the driver the edge creates', () => {
    let dir: string;
    let api: Server;
    const requests: { method: string; path: string; body: any }[] = [];
    const previousKubeconfig = process.env.KUBECONFIG;

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'slipway-edge-driver-'));
      // A stand-in Kubernetes API server: creates echo back, the Deployment reports available.
      api = createServer((req, res) => {
        let text = '';
        req.on('data', (c: Buffer) => (text += c.toString()));
        req.on('end', () => {
          const body = text ? JSON.parse(text) : null;
          requests.push({ method: req.method!, path: req.url!, body });
          res.setHeader('content-type', 'application/json');
          if (req.method === 'POST') {
            res.statusCode = 201;
            return res.end(JSON.stringify({ ...body, metadata: { ...body.metadata, uid: 'u', resourceVersion: '1', generation: 1 } }));
          }
          res.end(
            JSON.stringify({
              apiVersion: 'apps/v1',
              kind: 'Deployment',
              metadata: { name: 'x', generation: 1 },
              spec: { replicas: 1 },
              status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1 },
            }),
          );
        });
      });
      await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
      const kubeconfig = join(dir, 'kubeconfig');
      await writeFile(
        kubeconfig,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Config',
          'current-context': 'test',
          clusters: [{ name: 'test', cluster: { server: `http://127.0.0.1:${(api.address() as { port: number }).port}`, 'insecure-skip-tls-verify': true } }],
          users: [{ name: 'u', user: { token: 'test-token' } }],
          contexts: [{ name: 'test', context: { cluster: 'test', user: 'u' } }],
        }),
      );
      process.env.KUBECONFIG = kubeconfig;
    });
    afterAll(async () => {
      if (previousKubeconfig === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = previousKubeconfig;
      await new Promise((r) => api.close(r));
      await rm(dir, { recursive: true, force: true });
    });

    it('is the local driver by default', async () => {
      const driver = await createRuntimeDriver(loadEdgeConfig(base), createBlobStore({ BLOB_DIR: join(dir, 'blobs') }), join(dir, 'runtime'));
      expect(driver).toBeInstanceOf(LocalDriver);
    });

    it("is the kubernetes driver when chosen: pods get this edge's artifact URL and a token for their release only", async () => {
      const config = loadEdgeConfig({
        ...base,
        SLIPWAY_RUNTIME_DRIVER: 'kubernetes',
        SLIPWAY_RUNTIME_EDGE_URL: 'http://edge.slipway.svc:8080/',
        SLIPWAY_RUNTIME_NAMESPACE: 'apps-test',
        HEALTH_TIMEOUT_MS: '5000',
      });
      const driver = await createRuntimeDriver(config, createBlobStore({ BLOB_DIR: join(dir, 'blobs') }), join(dir, 'runtime'));
      expect(driver.constructor.name).toBe('KubernetesDriver');
      expect(driver.name).toBe('kubernetes');
      const releaseId = '0b9f7c1e-6a43-4b8e-9d4e-2f5a3c1d7e90';
      const running = await driver.start({
        releaseId,
        applicationId: '5d0c2a8e-1b7f-4e3a-9c6d-7a1e2b3c4d5e',
        slug: 'shop',
        artifactKey: `releases/${releaseId}.tar.gz`,
        startCommand: 'npm start',
        env: { A: '1' },
      });
      expect(running).toMatchObject({ host: 'shop-0b9f7c1e.apps-test.svc.cluster.local', port: 80 });
      const secret = requests.find((r) => r.method === 'POST' && r.path === '/api/v1/namespaces/apps-test/secrets')!.body;
      expect(secret.stringData.ARTIFACT_TOKEN).toBe(releaseArtifactToken(masterKey, releaseId));
      expect(secret.stringData.ARTIFACT_TOKEN).not.toBe(releaseArtifactToken(masterKey, '5d0c2a8e-1b7f-4e3a-9c6d-7a1e2b3c4d5e'));
      const deployment = requests.find((r) => r.method === 'POST' && r.path === '/apis/apps/v1/namespaces/apps-test/deployments')!.body;
      expect(deployment.spec.template.spec.initContainers[0].env).toContainEqual({
        name: 'ARTIFACT_URL',
        value: `http://edge.slipway.svc:8080/_slipway/artifacts/${releaseId}`,
      });
    });
  });
});
