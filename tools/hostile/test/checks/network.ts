/** Redis, Postgres, internal ports and the neighbour's port, from the app and from every lifecycle script. */
import { expectNone, networkViolations, unreachable } from '../support/evidence.js';
import { LIFECYCLE, allLifecycleFindings, appProbe } from '../support/probes.js';
import { check, type Check } from '../support/check.js';

export const networkChecks: Check[] = [
  check("cannot reach Redis, the platform's Postgres, the machine's Postgres, internal ports or the neighbour's port from the app", async (s) => {
    const probe = await appProbe(s);
    expectNone('the app reaches the platform over the network', networkViolations('app', probe.network, s.targets.tcp, 'app'), probe.network);
  }),

  check('cannot reach any of them from preinstall, postinstall or build either', async (s) => {
    const findings = await allLifecycleFindings(s);
    const violations = LIFECYCLE.flatMap((where) => networkViolations(where, findings[where]?.network, s.targets.tcp, 'build'));
    expectNone('install or build scripts reach the platform over the network', violations, Object.fromEntries(LIFECYCLE.map((w) => [w, findings[w]?.network])));
  }),

  check('still reaches the outside world (the npm registry) from the app, install and build, and its own database server from the app', async (s) => {
    const probe = await appProbe(s);
    const findings = await allLifecycleFindings(s);
    const violations = [
      ...unreachable('app', probe.network, s.targets.tcp, 'app'),
      ...LIFECYCLE.flatMap((where) => unreachable(where, findings[where]?.network, s.targets.tcp, 'build')),
    ];
    expectNone('containment cut off what tenants need', violations, {
      app: probe.network,
      ...Object.fromEntries(LIFECYCLE.map((w) => [w, findings[w]?.network])),
    });
  }),
];
