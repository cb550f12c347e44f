/** Who tenant code runs as, from inside (/proc/self/status) and from the host (/proc/<pid>/status). */
import { expectNone, identityViolations } from '../support/evidence.js';
import { LIFECYCLE, allLifecycleFindings, appProbe } from '../support/probes.js';
import { check, type Check } from '../support/check.js';
import type { Scenario } from '../support/scenario.js';

function forbiddenUids(s: Scenario): Map<number, string> {
  const uids = new Map<number, string>([[0, 'root']]);
  uids.set(process.getuid?.() ?? 0, uids.get(process.getuid?.() ?? 0) ?? 'the platform (the user running pnpm start)');
  if (s.buildUid !== null) uids.set(s.buildUid, 'slipway-build, the build user');
  return uids;
}

export const identityChecks: Check[] = [
  check('runs the app as a user of its own: not root, the platform, the build user or the neighbour; NoNewPrivs, no capabilities', async (s) => {
    const probe = await appProbe(s);
    const uids = forbiddenUids(s);
    uids.set(s.neighbour.answer.identity.uid, `the neighbour app (uid it reports for itself)`);
    const violations = identityViolations('app', probe.identity, { uids });
    if (probe.identity?.gid === s.neighbour.answer.identity.gid) violations.push(`app: shares gid ${probe.identity.gid} with the neighbour`);
    // The host's view: a user namespace could make any uid look harmless from inside.
    const neighbourUids = new Set(s.neighbour.processes.map((p) => p.uid));
    for (const p of s.prober.processes) {
      const who = forbiddenUids(s).get(p.uid) ?? (neighbourUids.has(p.uid) ? "the neighbour's uid" : undefined);
      if (who) violations.push(`app (host view): pid ${p.pid} "${p.cmdline}" runs as uid ${p.uid} (${who})`);
    }
    expectNone('the app runs with too much identity', violations, {
      inside: probe.identity,
      proberOnHost: s.prober.processes,
      neighbourOnHost: s.neighbour.processes,
      neighbourInside: s.neighbour.answer.identity,
    });
  }),

  check('runs preinstall, postinstall and build as an unprivileged user with NoNewPrivs and no capabilities', async (s) => {
    const findings = await allLifecycleFindings(s);
    const violations = LIFECYCLE.flatMap((where) => identityViolations(where, findings[where]?.identity, { uids: new Map([[0, 'root']]) }));
    expectNone('install and build scripts run with too much identity', violations, Object.fromEntries(LIFECYCLE.map((w) => [w, findings[w]?.identity])));
  }),
];
