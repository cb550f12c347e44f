import { RuleTester } from 'eslint';
import tseslint from 'typescript-eslint';
import rule from './service-auth-only.js';

const tester = new RuleTester({ languageOptions: { parser: tseslint.parser, ecmaVersion: 2022, sourceType: 'module' } });

tester.run('service-auth-only', rule, {
  valid: [
    // Prose naming the schema, a NOTIFY channel, the platform's own tables.
    { code: "const help = 'creates the service_auth schema, a cookie secret and signing keys';" },
    { code: "export const SERVICE_AUTH_CHANGED_CHANNEL = 'service_auth_changed';" },
    { code: "client.query('LISTEN service_auth_changed');" },
    { code: "pool.query('SELECT id FROM applications WHERE slug = $1', [slug]);" },
    // A store call: the SQL lives in libs/sign-in-core.
    { code: 'await listServiceUsers(client, search, 50);' },
    // Another schema whose name only starts the same.
    { code: "db.query('SELECT 1 FROM service_auth_archive.users');" },
  ],
  invalid: [
    { code: "db.query('SELECT id FROM service_auth.users WHERE id = $1', [id]);", errors: [{ messageId: 'sql', data: { table: 'users' } }] },
    { code: 'db.query(`DELETE FROM service_auth.sessions WHERE user_id = $1`, [userId]);', errors: [{ messageId: 'sql', data: { table: 'sessions' } }] },
    { code: 'db.query({ name: "k", text: `INSERT INTO service_auth.sessions AS s (id) VALUES ($1)` });', errors: [{ messageId: 'sql' }] },
    { code: 'db.query(`SELECT ${cols} FROM x JOIN "service_auth"."members" m ON true`);', errors: [{ messageId: 'sql', data: { table: 'members' } }] },
    { code: "db.query('update Service_Auth.users set banned = true');", errors: [{ messageId: 'sql', data: { table: 'users' } }] },
    { code: "db.query('TRUNCATE TABLE service_auth.jwks');", errors: [{ messageId: 'sql', data: { table: 'jwks' } }] },
    { code: "db.query('SET search_path TO service_auth, public');", errors: [{ messageId: 'searchPath' }] },
  ],
});
