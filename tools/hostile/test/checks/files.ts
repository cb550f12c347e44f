/** SLIPWAY_HOME (master key, runtime file, Postgres data, blobs, releases, logs, caches) and every readable file. */
import { expectNone, fileViolations } from '../support/evidence.js';
import { LIFECYCLE, allLifecycleFindings, appProbe } from '../support/probes.js';
import { check, type Check } from '../support/check.js';

export const fileChecks: Check[] = [
  check("keeps SLIPWAY_HOME, the master key, the database password and the neighbour's secret and source out of the app's reach", async (s) => {
    const probe = await appProbe(s);
    expectNone('the app reaches platform or neighbour files', fileViolations('app', probe.files), { home: s.platform.home, files: probe.files });
  }),

  check('keeps them out of reach of install and build scripts too', async (s) => {
    const findings = await allLifecycleFindings(s);
    const violations = LIFECYCLE.flatMap((where) => fileViolations(where, findings[where]?.files));
    expectNone('install or build scripts reach platform or neighbour files', violations, Object.fromEntries(LIFECYCLE.map((w) => [w, findings[w]?.files])));
  }),
];
