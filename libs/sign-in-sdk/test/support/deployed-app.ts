import { fileURLToPath } from 'node:url';
import { freePort, startProcess, waitFor, type RunningProcess } from '@slipway/testing';

export interface DeployedApp {
  /** Where to connect (127.0.0.1:port). */
  url: string;
  /** The Origin a browser on the app's page sends. */
  origin: string;
  stop(): Promise<void>;
}

const SHOP = fileURLToPath(new URL('../fixtures/shop/server.mjs', import.meta.url));

/**
 * Runs the fixture app the way the platform would: a Node process with the runtime variables a
 * deploy injects (`signInRuntimeEnv`) and PORT. Once the build worker and edge are merged, this is
 * the one function to replace with a real `POST /api/v1/deploy` of test/fixtures/shop + polling the
 * task + connecting through the edge with the app's Host header.
 */
export async function deployShop(runtimeEnv: Record<string, string>): Promise<DeployedApp> {
  const port = await freePort();
  const app: RunningProcess = startProcess('node', [SHOP], { env: { PATH: process.env['PATH'], ...runtimeEnv, PORT: String(port) } });
  try {
    await app.waitForOutput(/shop listening/, 20_000);
  } catch (error) {
    await app.stop();
    throw new Error(`the shop app did not start: ${(error as Error).message}\n${app.output()}`, { cause: error });
  }
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${url}/orders`)).ok, { what: 'shop answering' });
  return { url, origin: `http://localhost:${port}`, stop: () => app.stop() };
}
