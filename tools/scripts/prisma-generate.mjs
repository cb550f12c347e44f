// Runs `prisma generate` offline. Prisma's CLI insists on a schema-engine binary it cannot
// download here; generate never executes it, so any existing file satisfies the check.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
if (!existsSync(`${root}/node_modules/prisma`)) process.exit(0);
const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= process.execPath;
const result = spawnSync('pnpm', ['exec', 'prisma', 'generate', '--schema', 'prisma/platform/schema.prisma'], {
  cwd: root,
  env,
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
