/** The prober's findings, fetched through the edge like any visitor would (once each, then shared by the checks). */
import { parse, type Scenario } from './scenario.js';

export const LIFECYCLE = ['preinstall', 'postinstall', 'build'] as const;
export type Lifecycle = (typeof LIFECYCLE)[number];

/* Findings are JSON from the tenant's probes: untyped by nature. */
type Findings = any;

const cache = new WeakMap<Scenario, Map<string, Promise<Findings>>>();

function memo(scenario: Scenario, key: string, load: () => Promise<Findings>): Promise<Findings> {
  let map = cache.get(scenario);
  if (!map) cache.set(scenario, (map = new Map()));
  let value = map.get(key);
  if (!value) map.set(key, (value = load()));
  return value;
}

async function fetchJson(scenario: Scenario, path: string, timeoutMs: number): Promise<Findings> {
  const response = await scenario.platform.viaEdge(scenario.a.slug, path, timeoutMs);
  if (response.status !== 200) throw new Error(`GET ${path} on the prober answered ${response.status}: ${response.body.slice(0, 500)}`);
  return parse(response.body, `the prober's ${path}`);
}

/** GET /probe: identity, processes, files, network and databases, from inside the running app. */
export function appProbe(scenario: Scenario): Promise<Findings> {
  return memo(scenario, 'app', () => fetchJson(scenario, '/probe', 90_000));
}

/** What preinstall, postinstall or the build step found (written during the deploy, served by the app). */
export function lifecycleFindings(scenario: Scenario, where: Lifecycle): Promise<Findings> {
  return memo(scenario, where, () => fetchJson(scenario, `/findings/${where}`, 10_000));
}

export async function allLifecycleFindings(scenario: Scenario): Promise<Record<Lifecycle, Findings>> {
  const [preinstall, postinstall, build] = await Promise.all(LIFECYCLE.map((w) => lifecycleFindings(scenario, w)));
  return { preinstall, postinstall, build };
}
