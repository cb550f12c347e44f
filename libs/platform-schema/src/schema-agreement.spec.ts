/**
 * schema.prisma and the SQL migrations must describe the same database. `prisma migrate diff`
 * needs the schema-engine binary (not available here), so this test compares the two itself:
 * Prisma's DMMF (from the offline WASM schema parser) against the catalog of a database built
 * by the migrations. It fails on any table, column, type, nullability, default, index, foreign
 * key or enum that one side has and the other does not.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import pg from 'pg';
import { scratchDatabase } from '../test/scratch-database.js';
import { applyMigrations } from './migrate.js';

const require = createRequire(import.meta.url);
const wasm = require('@prisma/prisma-schema-wasm') as { get_dmmf: (params: string) => string };
const SCHEMA = fileURLToPath(new URL('../../../prisma/platform/schema.prisma', import.meta.url));

/** Indexes that schema.prisma cannot express (partial indexes), by name. */
const SQL_ONLY_INDEXES = new Set(['deployments_one_active_per_application', 'domains_one_verified_holder', 'database_restores_one_active']);

interface DmmfField {
  name: string;
  dbName?: string;
  kind: 'scalar' | 'enum' | 'object';
  type: string;
  isRequired: boolean;
  isList: boolean;
  hasDefaultValue: boolean;
  default?: { name?: string } | unknown;
  nativeType?: [string, string[]] | null;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
}
interface DmmfModel {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
}
interface Dmmf {
  datamodel: {
    models: DmmfModel[];
    enums: { name: string; dbName?: string | null; values: { name: string; dbName?: string | null }[] }[];
    indexes: { model: string; type: 'id' | 'unique' | 'normal' | 'fulltext'; dbName?: string; fields: { name: string }[] }[];
  };
}

const CLIENT_SIDE_DEFAULTS = new Set(['cuid', 'uuid', 'nanoid', 'ulid']);

function columnType(field: DmmfField, enumDbNames: Map<string, string>): string {
  if (field.kind === 'enum') return `enum:${enumDbNames.get(field.type) ?? field.type}`;
  const native = field.nativeType?.[0];
  const args = field.nativeType?.[1] ?? [];
  switch (field.type) {
    case 'String':
      return native === 'Uuid' ? 'uuid' : native === 'VarChar' ? `character varying(${args[0]})` : 'text';
    case 'DateTime':
      return native === 'Timestamptz'
        ? `timestamp with time zone(${args[0] ?? 6})`
        : `timestamp without time zone(${native === 'Timestamp' ? (args[0] ?? 6) : 3})`;
    case 'Int':
      return 'integer';
    case 'BigInt':
      return 'bigint';
    case 'Boolean':
      return 'boolean';
    case 'Json':
      return 'jsonb';
    case 'Bytes':
      return 'bytea';
    case 'Float':
      return 'double precision';
    case 'Decimal':
      return 'numeric';
    default:
      throw new Error(`schema-agreement: no mapping for ${field.type}`);
  }
}

function describeSchema(dmmf: Dmmf) {
  const enumDbNames = new Map(dmmf.datamodel.enums.map((e) => [e.name, e.dbName ?? e.name]));
  const tables = new Map(dmmf.datamodel.models.map((m) => [m.name, m.dbName ?? m.name]));
  const columnsOf = new Map<string, Map<string, string>>();
  const columns: string[] = [];
  const foreignKeys: string[] = [];
  for (const model of dmmf.datamodel.models) {
    const table = tables.get(model.name)!;
    const byField = new Map<string, string>();
    columnsOf.set(model.name, byField);
    for (const f of model.fields) {
      if (f.kind === 'object') continue;
      const column = f.dbName ?? f.name;
      byField.set(f.name, column);
      const clientSide = typeof f.default === 'object' && f.default !== null && CLIENT_SIDE_DEFAULTS.has((f.default as { name?: string }).name ?? '');
      const hasDbDefault = f.hasDefaultValue && !clientSide;
      columns.push(
        `${table}.${column} ${columnType(f, enumDbNames)}${f.isList ? '[]' : ''} ${f.isRequired ? 'NOT NULL' : 'NULL'}${hasDbDefault ? ' DEFAULT' : ''}`,
      );
    }
  }
  for (const model of dmmf.datamodel.models) {
    for (const f of model.fields) {
      if (f.kind !== 'object' || !f.relationFromFields?.length) continue;
      const from = f.relationFromFields.map((n) => columnsOf.get(model.name)!.get(n)).join(',');
      const to = f.relationToFields!.map((n) => columnsOf.get(f.type)!.get(n)).join(',');
      const onDelete = (f.relationOnDelete ?? (f.isRequired ? 'Restrict' : 'SetNull'))
        .toUpperCase()
        .replace('SETNULL', 'SET NULL')
        .replace('NOACTION', 'NO ACTION');
      foreignKeys.push(`${tables.get(model.name)}(${from}) -> ${tables.get(f.type)}(${to}) ON DELETE ${onDelete}`);
    }
  }
  const indexes = dmmf.datamodel.indexes.map((i) => {
    const kind = i.type === 'id' ? 'PRIMARY' : i.type === 'unique' ? 'UNIQUE' : 'INDEX';
    return `${kind} ${tables.get(i.model)}(${i.fields.map((f) => columnsOf.get(i.model)!.get(f.name)).join(',')})`;
  });
  const enums = dmmf.datamodel.enums.map((e) => `${e.dbName ?? e.name}: ${e.values.map((v) => v.dbName ?? v.name).join(',')}`);
  return { tables: [...tables.values()].sort(), columns: columns.sort(), indexes: indexes.sort(), foreignKeys: foreignKeys.sort(), enums: enums.sort() };
}

async function describeDatabase(client: pg.Client) {
  const q = async (sql: string) => (await client.query(sql)).rows;
  const tables = (
    await q(`SELECT table_name FROM information_schema.tables WHERE table_schema='public' AND table_type='BASE TABLE' AND table_name <> '_prisma_migrations'`)
  ).map((r) => r.table_name as string);
  const columns = (
    await q(`SELECT table_name, column_name, data_type, udt_name, is_nullable, column_default, datetime_precision, character_maximum_length
      FROM information_schema.columns WHERE table_schema='public' AND table_name <> '_prisma_migrations'`)
  ).map((r) => {
    let type = r.data_type as string;
    if (type === 'USER-DEFINED') type = `enum:${r.udt_name}`;
    else if (type === 'ARRAY') type = `${String(r.udt_name).replace(/^_/, '')}[]`;
    else if (type.startsWith('timestamp')) type = `${type}(${r.datetime_precision})`;
    else if (type === 'character varying') type = `${type}(${r.character_maximum_length})`;
    return `${r.table_name}.${r.column_name} ${type} ${r.is_nullable === 'YES' ? 'NULL' : 'NOT NULL'}${r.column_default !== null ? ' DEFAULT' : ''}`;
  });
  const indexes = (
    await q(`SELECT c.relname AS index_name, t.relname AS table_name, i.indisprimary, i.indisunique,
        (SELECT string_agg(a.attname, ',' ORDER BY k.ord) FROM unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
           JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum) AS cols
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
      JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = 'public' AND t.relname <> '_prisma_migrations'`)
  )
    .filter((r) => !SQL_ONLY_INDEXES.has(r.index_name))
    .map((r) => `${r.indisprimary ? 'PRIMARY' : r.indisunique ? 'UNIQUE' : 'INDEX'} ${r.table_name}(${r.cols})`);
  const foreignKeys = (
    await q(`SELECT tc.relname AS table_name, rc.relname AS ref_table, con.confdeltype,
        (SELECT string_agg(a.attname, ',' ORDER BY k.ord) FROM unnest(con.conkey) WITH ORDINALITY k(attnum, ord) JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum) AS cols,
        (SELECT string_agg(a.attname, ',' ORDER BY k.ord) FROM unnest(con.confkey) WITH ORDINALITY k(attnum, ord) JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum) AS ref_cols
      FROM pg_constraint con JOIN pg_class tc ON tc.oid = con.conrelid JOIN pg_class rc ON rc.oid = con.confrelid
      JOIN pg_namespace n ON n.oid = tc.relnamespace WHERE con.contype = 'f' AND n.nspname = 'public'`)
  ).map((r) => {
    const action = ({ a: 'NO ACTION', r: 'RESTRICT', c: 'CASCADE', n: 'SET NULL', d: 'SET DEFAULT' } as Record<string, string>)[r.confdeltype];
    return `${r.table_name}(${r.cols}) -> ${r.ref_table}(${r.ref_cols}) ON DELETE ${action}`;
  });
  const enums = (
    await q(`SELECT t.typname, string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) AS labels
      FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid JOIN pg_namespace n ON n.oid = t.typnamespace
      WHERE n.nspname = 'public' GROUP BY t.typname`)
  ).map((r) => `${r.typname}: ${r.labels}`);
  return { tables: tables.sort(), columns: columns.sort(), indexes: indexes.sort(), foreignKeys: foreignKeys.sort(), enums: enums.sort() };
}

describe('schema.prisma and the SQL migrations', () => {
  it('describe the same database', async () => {
    const dmmf = JSON.parse(wasm.get_dmmf(JSON.stringify({ prismaSchema: await readFile(SCHEMA, 'utf8') }))) as Dmmf;
    const fromSchema = describeSchema(dmmf);
    const db = await scratchDatabase();
    try {
      await applyMigrations(db.url);
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      const fromMigrations = await describeDatabase(client);
      await client.end();
      expect(fromMigrations).toEqual(fromSchema);
      expect(fromSchema.tables.length).toBeGreaterThanOrEqual(13);
    } finally {
      await db.drop();
    }
  });

  it('keeps the one-active-deploy index that the schema cannot express', async () => {
    const db = await scratchDatabase();
    try {
      await applyMigrations(db.url);
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      const owner = await client.query(`INSERT INTO owners (email) VALUES ('o@example.com') RETURNING id`);
      const app = await client.query(`INSERT INTO applications (owner_id, name, slug) VALUES ($1, 'a', 'a') RETURNING id`, [owner.rows[0].id]);
      const appId = app.rows[0].id;
      await client.query(`INSERT INTO deployments (application_id) VALUES ($1)`, [appId]);
      await expect(client.query(`INSERT INTO deployments (application_id) VALUES ($1)`, [appId])).rejects.toThrow(/deployments_one_active_per_application/);
      await client.query(`UPDATE deployments SET status = 'succeeded' WHERE application_id = $1`, [appId]);
      await client.query(`INSERT INTO deployments (application_id, status) VALUES ($1, 'building')`, [appId]);
      await client.end();
    } finally {
      await db.drop();
    }
  });
});
