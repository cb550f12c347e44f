/**
 * Two tenants on one platform, set up only through the public API and the CLI: B (the neighbour)
 * with a secret and a database, deployed first; then A (the prober), told where B and the
 * platform's files are, deployed with install and build scripts that probe. A third tenant (C)
 * holds the link tests' deploys.
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { waitFor } from '@slipway/testing';
import { fixtureCopy, hostAddresses, processesHolding, uidOf, type HostProcess } from './host.js';
import { HostilePlatform, type Account, type Task } from './platform.js';
import { buildTargets, type Needles, type Targets } from './targets.js';

export interface NeighbourAnswer {
  served: string;
  port: string;
  pgVersion: string;
  marker: boolean;
  hasSecret: boolean;
  identity: { uid: number; gid: number; Uid: string };
}

export interface Scenario {
  platform: HostilePlatform;
  a: Account;
  b: Account;
  c: Account;
  aTask: Task;
  bTask: Task;
  needles: Needles;
  targets: Targets;
  neighbour: { answer: NeighbourAnswer; processes: HostProcess[]; database: string | null; source: string };
  prober: { marker: string; processes: HostProcess[] };
  buildUid: number | null;
  cleanup: string[];
}

export function parse<T>(body: string, what: string): T {
  try {
    return JSON.parse(body) as T;
  } catch {
    throw new Error(`${what} did not answer JSON: ${body.slice(0, 500)}`);
  }
}

function succeeded(task: Task, what: string): Task {
  if (task.status !== 'succeeded')
    throw new Error(`${what} did not deploy: ${JSON.stringify(task.error)} ${JSON.stringify(task.steps?.map((s) => [s.name, s.status]))}`);
  return task;
}

export async function neighbourAnswer(platform: HostilePlatform, b: Account): Promise<NeighbourAnswer> {
  const response = await platform.viaEdge(b.slug, '/');
  if (response.status !== 200) throw new Error(`the neighbour answered ${response.status}: ${response.body.slice(0, 300)}`);
  return parse<NeighbourAnswer>(response.body, 'the neighbour');
}

export async function setUpScenario(): Promise<Scenario> {
  const platform = await HostilePlatform.start('tenants');
  const cleanup: string[] = [];
  try {
    const [a, b, c] = [
      await platform.bootstrap('prober@hostile.example', 'Prober'),
      await platform.bootstrap('neighbour@hostile.example', 'Neighbour'),
      await platform.bootstrap('linker@hostile.example', 'Linker'),
    ];
    await platform.enableSignIn(b);
    await platform.enableSignIn(a);

    const neighbourSecret = `nbr-${randomBytes(16).toString('hex')}`;
    const neighbourSource = `src-${randomBytes(16).toString('hex')}`;
    await platform.setSecrets(b, { NEIGHBOUR_SECRET: neighbourSecret });
    const bDir = await fixtureCopy('neighbour', {}, { 'neighbour.mjs': ["'SOURCE_TOKEN'", `'${neighbourSource}'`] });
    cleanup.push(bDir);
    const bTask = succeeded(await platform.deploy(b, bDir), 'the neighbour');
    const answer = await neighbourAnswer(platform, b);
    const neighbourProcesses = await waitFor(
      async () => {
        const found = await processesHolding(neighbourSecret);
        return found.length ? found : undefined;
      },
      { timeoutMs: 10_000, what: "the neighbour's processes" },
    );
    const [database] = await platform
      .query<{ database_name: string }>('SELECT database_name FROM application_databases WHERE application_id = $1', [b.applicationId])
      .catch(() => []);

    const runtime = await platform.runtime();
    const needles: Needles = { masterKey: await platform.masterKey(), postgresPassword: await platform.postgresPassword(), neighbourSecret, neighbourSource };
    const targets = buildTargets({
      home: platform.home,
      needles,
      redisUrl: runtime.redisUrl,
      ports: platform.ports,
      neighbourPort: Number(answer.port),
      hostAddresses: hostAddresses(),
      neighbourPids: neighbourProcesses.map((p) => p.pid),
      ownApplicationId: a.applicationId,
      neighbourApplicationId: b.applicationId,
      neighbourDatabase: database?.database_name ?? null,
    });
    const marker = `prb-${randomBytes(12).toString('hex')}`;
    await platform.setSecrets(a, { HOSTILE_TARGETS: JSON.stringify(targets), HOSTILE_MARKER: marker });
    // Spelled differently from the secret, so the analyzer does not take the file for a leaked secret.
    const aDir = await fixtureCopy('prober', { 'hostile-targets.json': JSON.stringify(targets, null, 1) });
    cleanup.push(aDir);
    const aTask = succeeded(await platform.deploy(a, aDir), 'the prober');
    const proberProcesses = await waitFor(
      async () => {
        const found = await processesHolding(marker);
        return found.length ? found : undefined;
      },
      { timeoutMs: 10_000, what: "the prober's processes" },
    );

    return {
      platform,
      a,
      b,
      c,
      aTask,
      bTask,
      needles,
      targets,
      neighbour: { answer, processes: neighbourProcesses, database: database?.database_name ?? null, source: bDir },
      prober: { marker, processes: proberProcesses },
      buildUid: await uidOf('slipway-build'),
      cleanup,
    };
  } catch (error) {
    await platform.stop();
    await Promise.all(cleanup.map((dir) => rm(dir, { recursive: true, force: true })));
    throw error;
  }
}

export async function tearDown(scenario: Scenario | undefined): Promise<void> {
  if (!scenario) return;
  await scenario.platform.stop();
  await Promise.all(scenario.cleanup.map((dir) => rm(dir, { recursive: true, force: true })));
}
