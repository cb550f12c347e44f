import { RuleTester } from 'eslint';
import tseslint from 'typescript-eslint';
import rule from './platform-data-only.js';

const tester = new RuleTester({ languageOptions: { parser: tseslint.parser, ecmaVersion: 2022, sourceType: 'module' } });

tester.run('platform-data-only', rule, {
  valid: [
    // A sign-in tenant's own schema: not platform tables.
    { code: 'db.query(`SELECT id FROM "user" WHERE email = $1`, [email]);' },
    { code: "db.query('DELETE FROM session WHERE expires_at < now()');" },
    { code: 'db.query(`INSERT INTO ${schema}.verification (id) VALUES ($1)`);' },
    // English, not SQL; a table name that only starts like a platform one.
    { code: "throw new Error('removed from applications list');" },
    { code: "sql('SELECT 1 FROM applications_archive');" },
    // Not a Prisma delegate call; a repository call.
    { code: 'settings.domain.trim(); repo.applications.findMany();' },
    { code: 'await applications.create(ownerId, name);' },
    { code: "import { applyMigrations } from '@slipway/platform-schema';" },
  ],
  invalid: [
    { code: "pool.query('SELECT id FROM applications WHERE slug = $1', [slug]);", errors: [{ messageId: 'sql', data: { table: 'applications' } }] },
    { code: 'pool.query({ name: "k", text: `UPDATE api_keys SET last_used_at = now() WHERE id = $1` });', errors: [{ messageId: 'sql' }] },
    { code: 'db.query(\'SELECT r.id FROM x JOIN "releases" r ON true\');', errors: [{ messageId: 'sql', data: { table: 'releases' } }] },
    { code: "db.query('DELETE FROM public.owner_sessions WHERE id = $1');", errors: [{ messageId: 'sql', data: { table: 'owner_sessions' } }] },
    { code: 'await this.prisma.client.application.findMany({ where: { ownerId } });', errors: [{ messageId: 'model', data: { model: 'application' } }] },
    { code: 'await tx.signInService.upsert({});', errors: [{ messageId: 'model' }] },
    { code: 'await prisma.$queryRaw`SELECT 1`;', errors: [{ messageId: 'raw', data: { what: '$queryRaw' } }] },
    { code: 'await prisma.$transaction(async (tx) => tx);', errors: [{ messageId: 'raw' }] },
    { code: "import { createPrismaClient, type PrismaClient } from '@slipway/platform-schema';", errors: [{ messageId: 'client' }, { messageId: 'client' }] },
  ],
});
