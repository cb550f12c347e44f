import { Injectable } from '@nestjs/common';
import pg from 'pg';

export interface ServiceUserRow {
  id: string;
  email: string;
  name: string;
  email_verified: boolean;
  created_at: Date;
}

/**
 * The dashboard's reads of an application's OWN database (`service_auth.users`), with the
 * application's own role: not the platform database, whose queries live in libs/platform-data.
 */
@Injectable()
export class DashboardSignInRepository {
  /** The application's users, read with the application's own role from its own database. */
  async users(tenantUrl: string, search: string, limit: number): Promise<{ users: ServiceUserRow[]; total: number }> {
    const client = new pg.Client({ connectionString: tenantUrl });
    await client.connect();
    try {
      const pattern = `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      const where = search ? 'WHERE email ILIKE $1 OR name ILIKE $1' : 'WHERE $1::text IS NOT NULL';
      const [rows, count] = await Promise.all([
        client.query<ServiceUserRow>(`SELECT id, email, name, email_verified, created_at FROM service_auth.users ${where} ORDER BY created_at DESC LIMIT ${limit}`, [pattern]),
        client.query<{ n: number }>(`SELECT count(*)::int AS n FROM service_auth.users ${where}`, [pattern]),
      ]);
      return { users: rows.rows, total: count.rows[0]!.n };
    } finally {
      await client.end();
    }
  }
}
