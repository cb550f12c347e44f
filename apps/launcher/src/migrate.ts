import { loadConfig, postgresUrl, z } from '@slipway/config';
import { applyMigrations } from '@slipway/platform-schema';
import { runMain } from '@slipway/service-kit';

/** `pnpm migrate`: applies the platform migrations to DATABASE_URL (what CI/Kubernetes run before rollout). */
runMain('migrate', async () => {
  const { DATABASE_URL } = loadConfig(z.object({ DATABASE_URL: postgresUrl }));
  const result = await applyMigrations(DATABASE_URL);
  for (const name of result.applied) process.stdout.write(`applied ${name}\n`);
  process.stdout.write(`${result.applied.length} applied, ${result.alreadyApplied.length} already applied\n`);
});
