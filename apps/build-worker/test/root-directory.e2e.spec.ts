import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { DeployHarness, FIXTURES, freePort, sourceTar } from '@slipway/testing';

/**
 * The deploy's `rootDirectory` reaches the analyze step of the real worker process: stored with
 * the deployment (by the gateway; here as the gateway writes it), read with the start from the
 * deployment's own row, handed to the analyzer. How the analyzer uses it is libs/analyzer's.
 */
describe('build worker: the deploy rootDirectory (real Postgres, Redis, worker process)', () => {
  let h: DeployHarness;
  let edge: Server;

  beforeAll(async () => {
    h = await DeployHarness.create('worker-rootdir');
    // Stands in for the edge's internal hand-off endpoint only (the edge has its own tests).
    const edgePort = await freePort();
    edge = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'healthy' })));
    await new Promise<void>((resolve) => edge.listen(edgePort, '127.0.0.1', resolve));
    await h.startWorker({ EDGE_INTERNAL_URL: `http://127.0.0.1:${edgePort}` });
  }, 60_000);

  afterAll(async () => {
    await h.close();
    edge.close();
  });

  it("analyzes with each deployment's own rootDirectory: two tenants' deploys side by side, only the one that named it gets it", async () => {
    // A static site at the top and another in apps/web: it deploys whichever directory is analyzed.
    const source = await sourceTar(join(FIXTURES, 'static-site'), { 'apps/web/index.html': '<h1>web</h1>' });
    const [monorepo, plain] = [await h.createApplication(), await h.createApplication()];
    const named = await h.deploy(monorepo, source, { rootDirectory: 'apps/web' });
    const unnamed = await h.deploy(plain, source);
    const [withRoot, withoutRoot] = [await h.waitForFinal(named), await h.waitForFinal(unnamed)];
    const analyzeLog = (row: typeof withRoot) => row.steps.find((s) => s.name === 'analyze')!.log;
    expect(withRoot.steps.find((s) => s.name === 'analyze')!.status).toBe('succeeded');
    expect(analyzeLog(withRoot)).toContain("root directory apps/web (the deploy's rootDirectory)");
    expect(withoutRoot.steps.find((s) => s.name === 'analyze')!.status).toBe('succeeded');
    expect(analyzeLog(withoutRoot)).not.toContain('root directory');
  });
});
