/** Returns the same server URL pointing at another database name. */
export function withDatabase(databaseUrl: string, database: string): string {
  const url = new URL(databaseUrl);
  url.pathname = `/${encodeURIComponent(database)}`;
  return url.toString();
}

/** Quotes an SQL identifier (database, role, schema names). */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
