import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { UnhealthyReleaseError, type ReleaseToRun } from '../driver.js';
import { KubernetesDriver } from './kubernetes-driver.js';
import { releaseManifests, type KubernetesOptions } from './manifests.js';

interface Recorded {
  method: string;
  path: string;
  authorization: string | undefined;
  body: unknown;
}

const release: ReleaseToRun = {
  releaseId: '0b9f7c1e-6a43-4b8e-9d4e-2f5a3c1d7e90',
  applicationId: '5d0c2a8e-1b7f-4e3a-9c6d-7a1e2b3c4d5e',
  slug: 'shop',
  artifactKey: 'releases/0b9f7c1e-6a43-4b8e-9d4e-2f5a3c1d7e90.tar.gz',
  startCommand: 'npm run start',
  env: { STRIPE_KEY: 'sk_test_recorded', DATABASE_URL: 'postgresql://app_shop:pw@db:5432/app_shop' },
};
const options: KubernetesOptions = {
  namespace: 'slipway-apps',
  image: 'node:20-slim',
  artifactUrl: (id) => `http://edge.slipway.svc:8080/_slipway/artifacts/${id}`,
  artifactToken: 'artifact-token',
};

/**
 * A stand-in API server that records every request the real @kubernetes/client-node sends and
 * answers like the API server would (echoing created objects, then reporting the Deployment as
 * rolling out and, on the second status read, available unless told otherwise).
 */
async function recordingApiServer(behaviour: { becomesReady: boolean }): Promise<{ server: Server; url: string; requests: Recorded[] }> {
  const requests: Recorded[] = [];
  let statusReads = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const body: unknown = text ? JSON.parse(text) : null;
      requests.push({ method: req.method!, path: req.url!, authorization: req.headers.authorization, body });
      res.setHeader('content-type', 'application/json');
      if (req.method === 'POST') {
        res.statusCode = 201;
        const created = body as { metadata: Record<string, unknown> };
        return res.end(JSON.stringify({ ...created, metadata: { ...created.metadata, uid: 'uid-1', resourceVersion: '1', generation: 1 } }));
      }
      if (req.method === 'GET' && req.url!.endsWith('/status')) {
        statusReads += 1;
        const ready = behaviour.becomesReady && statusReads >= 2;
        return res.end(
          JSON.stringify({
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            metadata: { name: 'shop-0b9f7c1e', generation: 1 },
            spec: { replicas: 1 },
            status: ready
              ? { observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1, readyReplicas: 1 }
              : {
                  observedGeneration: 1,
                  replicas: 1,
                  updatedReplicas: 1,
                  unavailableReplicas: 1,
                  conditions: [{ type: 'Available', status: 'False', message: 'Deployment does not have minimum availability.' }],
                },
          }),
        );
      }
      if (req.method === 'DELETE') return res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Status', status: 'Success' }));
      res.statusCode = 404;
      res.end(JSON.stringify({ kind: 'Status', code: 404 }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, requests };
}

function kubeConfig(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'test', server, skipTLSVerify: true }],
    users: [{ name: 'slipway', token: 'test-token' }],
    contexts: [{ name: 'test', cluster: 'test', user: 'slipway' }],
    currentContext: 'test',
  });
  return kc;
}

describe('kubernetes runtime driver', () => {
  it('produces manifests that validate against the Kubernetes schemas, with a restricted security context', () => {
    const { secret, deployment, service } = releaseManifests(release, options);
    expect(() => new Deployment(deployment as never).validate()).not.toThrow();
    expect(() => new Service(service as never).validate()).not.toThrow();
    expect(() => new Secret(secret as never).validate()).not.toThrow();
    const pod = deployment.spec!.template.spec!;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    for (const container of [...pod.containers, ...pod.initContainers!]) {
      expect(container.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
      expect(container.resources).toMatchObject({ requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '1', memory: '512Mi' } });
    }
    expect(pod.containers[0]!.readinessProbe).toMatchObject({ httpGet: { path: '/', port: 'http' } });
    // Secret values travel in a Secret, never in the pod spec.
    expect(JSON.stringify(deployment)).not.toContain('sk_test_recorded');
  });

  it('the schema validation really checks (a broken manifest is refused)', () => {
    const { deployment } = releaseManifests(release, options);
    const broken = { ...deployment, spec: { ...deployment.spec!, replicas: 'one' } };
    expect(() => new Deployment(broken as never).validate()).toThrow();
  });

  it('starts a release with exactly the recorded API calls, then stops it', async () => {
    const api = await recordingApiServer({ becomesReady: true });
    try {
      const driver = new KubernetesDriver({ ...options, kubeConfig: kubeConfig(api.url), readyTimeoutMs: 5000, pollMs: 10 });
      const running = await driver.start(release);
      expect(running).toMatchObject({ host: 'shop-0b9f7c1e.slipway-apps.svc.cluster.local', port: 80 });
      await running.stop();
      const recording = join(import.meta.dirname, 'recordings', 'start-and-stop.json');
      if (process.env['UPDATE_RECORDINGS'] || !existsSync(recording)) await writeFile(recording, `${JSON.stringify(api.requests, null, 2)}\n`);
      expect(api.requests).toEqual(JSON.parse(await readFile(recording, 'utf8')));
      expect(api.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
        'POST /api/v1/namespaces/slipway-apps/secrets',
        'POST /apis/apps/v1/namespaces/slipway-apps/deployments',
        'POST /api/v1/namespaces/slipway-apps/services',
        'GET /apis/apps/v1/namespaces/slipway-apps/deployments/shop-0b9f7c1e/status',
        'GET /apis/apps/v1/namespaces/slipway-apps/deployments/shop-0b9f7c1e/status',
        'DELETE /apis/apps/v1/namespaces/slipway-apps/deployments/shop-0b9f7c1e',
        'DELETE /api/v1/namespaces/slipway-apps/services/shop-0b9f7c1e',
        'DELETE /api/v1/namespaces/slipway-apps/secrets/shop-0b9f7c1e',
      ]);
      expect(new Set(api.requests.map((r) => r.authorization))).toEqual(new Set(['Bearer test-token']));
    } finally {
      api.server.close();
    }
  });

  it("refuses a release built on another Node than the image's, before any API call", async () => {
    const api = await recordingApiServer({ becomesReady: true });
    try {
      const driver = new KubernetesDriver({ ...options, kubeConfig: kubeConfig(api.url), readyTimeoutMs: 5000, pollMs: 10 });
      await expect(driver.start({ ...release, nodeVersion: '24.1.0' })).rejects.toThrow(
        /built on Node\.js 24\.1\.0; the kubernetes driver runs releases on the image's Node\.js/,
      );
      expect(api.requests).toEqual([]);
    } finally {
      api.server.close();
    }
  });

  it('a release that never becomes available is cleaned up and reported unhealthy with the conditions', async () => {
    const api = await recordingApiServer({ becomesReady: false });
    try {
      const driver = new KubernetesDriver({ ...options, kubeConfig: kubeConfig(api.url), readyTimeoutMs: 300, pollMs: 20 });
      const failure = driver.start(release);
      await expect(failure).rejects.toThrow(UnhealthyReleaseError);
      await expect(failure).rejects.toMatchObject({ logTail: expect.stringContaining('Deployment does not have minimum availability') });
      expect(api.requests.filter((r) => r.method === 'DELETE')).toHaveLength(3);
    } finally {
      api.server.close();
    }
  });
});
