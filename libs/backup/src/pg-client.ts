import pg from 'pg';

/** A client whose connection dying (the server stopping) rejects its queries instead of throwing an unhandled 'error' in the process. */
export function pgClient(connectionString: string, applicationName = 'slipway-backup'): pg.Client {
  const client = new pg.Client({ connectionString, application_name: applicationName });
  client.on('error', () => undefined);
  return client;
}
