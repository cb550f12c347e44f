/**
 * The hostile-tenant suite: a platform started as `pnpm start` starts it, two tenants set up
 * through the CLI and the public API, and a prober deployed next to its neighbour. Each check
 * plays the attacker from inside the tenant (install scripts, build, running app) and fails with
 * the evidence it found. Order matters only at the end: cache poisoning, then the resource attacks.
 */
import { cacheChecks } from './checks/cache.js';
import { databaseChecks } from './checks/databases.js';
import { fileChecks } from './checks/files.js';
import { identityChecks } from './checks/identity.js';
import { linkChecks } from './checks/links.js';
import { networkChecks } from './checks/network.js';
import { processChecks } from './checks/processes.js';
import { resourceChecks } from './checks/resources.js';
import { expectCheck, type Check } from './support/check.js';
import { setUpScenario, tearDown, type Scenario } from './support/scenario.js';

describe('a hostile tenant next to a neighbour', () => {
  let scenario: Scenario | undefined;
  const get = (): Scenario => {
    if (!scenario) throw new Error('the scenario did not start (see beforeAll)');
    return scenario;
  };

  beforeAll(async () => {
    scenario = await setUpScenario();
  }, 420_000);

  afterAll(async () => {
    await tearDown(scenario);
  }, 60_000);

  const groups: [string, Check[]][] = [
    ['identity', identityChecks],
    ['processes', processChecks],
    ['files', fileChecks],
    ['network', networkChecks],
    ['databases', databaseChecks],
    ['links', linkChecks],
    ['dependency cache', cacheChecks],
    ['resources', resourceChecks],
  ];
  describe.each(groups)('%s', (_group, checks) => {
    it.each(checks.map((c) => [c.name, c] as const))('%s', (_name, c) => expectCheck(c, get()));
  });
});
