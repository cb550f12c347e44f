/** Other processes: invisible, and their environments (the neighbour's secret) unreadable. */
import { expectNone, processViolations } from '../support/evidence.js';
import { LIFECYCLE, allLifecycleFindings, appProbe } from '../support/probes.js';
import { check, type Check } from '../support/check.js';

function summary(processes: any): unknown {
  return { count: processes?.count, visible: processes?.visible?.slice(0, 40), neighbour: processes?.neighbour, crashed: processes?.crashed };
}

export const processChecks: Check[] = [
  check("shows the app only its own processes, and never the neighbour's environment", async (s) => {
    const probe = await appProbe(s);
    expectNone('the app sees or reads other processes', processViolations('app', probe.processes), {
      app: summary(probe.processes),
      neighbourOnHost: s.neighbour.processes,
    });
  }),

  check("shows install and build scripts only their own processes, and never the neighbour's environment", async (s) => {
    const findings = await allLifecycleFindings(s);
    const violations = LIFECYCLE.flatMap((where) => processViolations(where, findings[where]?.processes));
    expectNone(
      'install or build scripts see or read other processes',
      violations,
      Object.fromEntries(LIFECYCLE.map((w) => [w, summary(findings[w]?.processes)])),
    );
  }),
];
