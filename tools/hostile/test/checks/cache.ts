/**
 * Cache poisoning: the prober looks for other applications' installed node_modules (from its
 * install and build scripts and from the running app) and plants a marker and a rewritten
 * `pg/package.json` in whatever it can write. The neighbour then redeploys the same source (a
 * cache hit is expected) and must serve exactly what it served before.
 */
import { waitFor } from '@slipway/testing';
import { expectNone } from '../support/evidence.js';
import { allLifecycleFindings } from '../support/probes.js';
import { check, type Check } from '../support/check.js';
import { neighbourAnswer, parse } from '../support/scenario.js';

export const cacheChecks: Check[] = [
  check("cannot poison the neighbour's dependencies: after its redeploy the neighbour serves its own code", async (s) => {
    const before = await neighbourAnswer(s.platform, s.b);
    const fromApp = await s.platform.viaEdge(s.a.slug, '/poison', 30_000);
    const appAttempt = fromApp.status === 200 ? parse<any>(fromApp.body, 'the poison attempt') : { error: `${fromApp.status} ${fromApp.body.slice(0, 300)}` };
    const lifecycle = await allLifecycleFindings(s);
    const attempts = { app: appAttempt, postinstall: lifecycle.postinstall?.poison, build: lifecycle.build?.poison };

    const redeploy = await s.platform.deploy(s.b, s.neighbour.source);
    const install = redeploy.steps?.find((st) => st.name === 'install');
    // The new release's process has a port of its own: wait until the edge routes to it.
    const after =
      redeploy.status === 'succeeded'
        ? await waitFor(
            async () => {
              const answer = await neighbourAnswer(s.platform, s.b);
              return answer.port !== before.port ? answer : undefined;
            },
            { timeoutMs: 15_000, intervalMs: 200, what: "the neighbour's new release to serve" },
          )
        : null;

    const violations: string[] = [];
    for (const [where, attempt] of Object.entries(attempts)) {
      for (const a of attempt?.attempts ?? []) {
        if (a.marker === 'written' || a.package === 'rewritten')
          violations.push(`${where}: wrote into ${a.path} (marker: ${a.marker}, pg/package.json: ${a.package})`);
      }
    }
    if (before.pgVersion !== s.neighbour.answer.pgVersion || before.marker)
      violations.push(`the live neighbour changed before any redeploy: pg ${before.pgVersion}, marker ${before.marker}`);
    if (redeploy.status !== 'succeeded') violations.push(`the neighbour's redeploy ${redeploy.status}: ${JSON.stringify(redeploy.error)}`);
    else if (after && (after.pgVersion !== s.neighbour.answer.pgVersion || after.marker || after.served !== s.neighbour.answer.served)) {
      violations.push(`after its redeploy the neighbour serves pg ${after.pgVersion} (was ${s.neighbour.answer.pgVersion}), marker ${after.marker}`);
    }
    expectNone("a tenant reached another application's dependencies", violations, {
      attempts,
      neighbour: { first: s.neighbour.answer, beforeRedeploy: before, afterRedeploy: after },
      redeployInstallStep: { status: install?.status, log: install?.log?.slice(-600) },
    });
  }),
];
