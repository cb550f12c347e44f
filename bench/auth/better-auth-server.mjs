// A stock Better Auth server (email + password, JWT plugin) over its own Postgres database, for
// comparison. Usage: node better-auth-server.mjs <port> <databaseUrl> <origin> [bcryptCost]
// With bcryptCost, passwords are hashed with bcrypt at that cost through Better Auth's own
// `emailAndPassword.password: { hash, verify }` options, using the same native `bcrypt` package
// as auth-service (equal hashing); without it, Better Auth's default scrypt.
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import pg from 'pg';
import { betterAuth } from 'better-auth';
import { getMigrations } from 'better-auth/db/migration';
import { toNodeHandler } from 'better-auth/node';
import { jwt } from 'better-auth/plugins';

const [port, databaseUrl, origin, bcryptCost] = process.argv.slice(2);
const bcrypt = createRequire(new URL('../../apps/auth-service/package.json', import.meta.url))('bcrypt');
const password = bcryptCost
  ? { hash: (plain) => bcrypt.hash(plain, Number(bcryptCost)), verify: ({ hash, password: plain }) => bcrypt.compare(plain, hash) }
  : undefined;
const auth = betterAuth({
  baseURL: `http://127.0.0.1:${port}`,
  basePath: '/api/auth',
  secret: 'bench-secret-bench-secret-bench-secret-0123456789',
  database: new pg.Pool({ connectionString: databaseUrl, max: 10 }),
  emailAndPassword: { enabled: true, ...(password ? { password } : {}) },
  trustedOrigins: [origin],
  rateLimit: { enabled: false },
  telemetry: { enabled: false },
  plugins: [jwt()],
});
const { runMigrations } = await getMigrations(auth.options);
await runMigrations();
createServer(toNodeHandler(auth)).listen(Number(port), '127.0.0.1', () => process.stdout.write(`listening ${port}\n`));
