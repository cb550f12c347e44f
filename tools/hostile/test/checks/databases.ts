/**
 * The app's own role: its own database works — through PgBouncer, the only way there (issue 27) —
 * and the platform's and the neighbour's refuse it.
 */
import { expectNone } from '../support/evidence.js';
import { appProbe } from '../support/probes.js';
import { check, type Check } from '../support/check.js';

export const databaseChecks: Check[] = [
  check("lets the app's role into its own database only: not the platform's `slipway`, not the neighbour's", async (s) => {
    const probe = await appProbe(s);
    const db = probe.databases ?? {};
    const violations: string[] = [];
    if (db.crashed || db.error) violations.push(`app: the database probe did not run: ${db.crashed ?? db.error}`);
    if (!s.neighbour.database) violations.push('the neighbour has no database row (sign-in was switched on for it): the cross-database attempt proves nothing');
    if (db.own && !db.own.connected) violations.push(`app: its own database ${db.ownDatabase} refused its own role: ${db.own.error}`);
    const bouncer = s.targets.tcp.find((t) => t.name === 'pgbouncer (127.0.0.1)');
    if (db.host && bouncer && db.host !== `127.0.0.1:${bouncer.port}`)
      violations.push(`app: its DATABASE_URL names ${db.host}, not the platform's PgBouncer (127.0.0.1:${bouncer.port})`);
    for (const other of db.others ?? []) {
      if (other.database === 'postgres') continue; // reported, not asserted: the maintenance database holds no tenant data
      if (other.connected) {
        violations.push(
          `app: connected to ${other.database} as ${other.as?.user} (advisory lock: ${other.advisoryLock}, temp table: ${other.tempTable}, tables: ${(other.tables ?? []).slice(0, 6).join(', ')})`,
        );
      }
    }
    expectNone("the app's database role reaches other databases", violations, db);
  }),
];
