// A stock Better Auth server (email + password, JWT plugin) over its own Postgres database, for
// comparison. Usage: node better-auth-server.mjs <port> <databaseUrl> <origin>
import { createServer } from 'node:http';
import pg from 'pg';
import { betterAuth } from 'better-auth';
import { getMigrations } from 'better-auth/db/migration';
import { toNodeHandler } from 'better-auth/node';
import { jwt } from 'better-auth/plugins';

const [port, databaseUrl, origin] = process.argv.slice(2);
const auth = betterAuth({
  baseURL: `http://127.0.0.1:${port}`,
  basePath: '/api/auth',
  secret: 'bench-secret-bench-secret-bench-secret-0123456789',
  database: new pg.Pool({ connectionString: databaseUrl, max: 10 }),
  emailAndPassword: { enabled: true },
  trustedOrigins: [origin],
  rateLimit: { enabled: false },
  telemetry: { enabled: false },
  plugins: [jwt()],
});
const { runMigrations } = await getMigrations(auth.options);
await runMigrations();
createServer(toNodeHandler(auth)).listen(Number(port), '127.0.0.1', () => process.stdout.write(`listening ${port}\n`));
