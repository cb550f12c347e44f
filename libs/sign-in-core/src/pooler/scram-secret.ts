import { createHash, createHmac, pbkdf2Sync } from 'node:crypto';

/** Postgres's default iteration count for SCRAM-SHA-256 (`scram_iterations`). */
const ITERATIONS = 4096;

/**
 * The SCRAM-SHA-256 secret of a role, exactly as Postgres stores it in `pg_authid.rolpassword`
 * (`SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`, RFC 5802/7677).
 *
 * Why we compute it ourselves: PgBouncer authenticates an application's client against this
 * secret (auth_file) and then logs in to Postgres with the keys that client proved, which works
 * only when PgBouncer's secret and the server's are the SAME (same salt, same iterations). The
 * role is therefore given this very secret (`ALTER ROLE … PASSWORD 'SCRAM-SHA-256$…'`), and the
 * salt is derived from the role's own 192-bit random password (HMAC keyed by it), so anything
 * that can decrypt the password (the master key) can write PgBouncer's auth_file again without
 * reading `pg_authid` — which only a superuser may, and an operator's APP_DATABASES_ADMIN_URL
 * need not be one. The salt is unique per role and as hard to guess as the password itself.
 */
export function roleScramSecret(roleName: string, password: string): string {
  const salt = createHmac('sha256', password).update(`slipway role salt:${roleName}`).digest().subarray(0, 16);
  const salted = pbkdf2Sync(password, salt, ITERATIONS, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${ITERATIONS}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}
