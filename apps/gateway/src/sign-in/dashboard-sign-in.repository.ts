import { Injectable } from '@nestjs/common';
import pg from 'pg';
import { PrismaService } from '../common/prisma.service.js';

export interface ServiceUserRow {
  id: string;
  email: string;
  name: string;
  email_verified: boolean;
  created_at: Date;
}

@Injectable()
export class DashboardSignInRepository {
  constructor(private readonly prisma: PrismaService) {}

  findService(applicationId: string) {
    return this.prisma.client.signInService.findUnique({ where: { applicationId }, select: { settings: true } });
  }

  findDatabase(applicationId: string) {
    return this.prisma.client.applicationDatabase.findUnique({ where: { applicationId }, select: { databaseName: true, roleName: true, password: true } });
  }

  async updateSettings(applicationId: string, settings: object, allowLocalhost: boolean | undefined): Promise<void> {
    await this.prisma.client.$transaction([
      this.prisma.client.signInService.update({ where: { applicationId }, data: { settings } }),
      ...(allowLocalhost === undefined ? [] : [this.prisma.client.application.update({ where: { id: applicationId }, data: { allowLocalhost } })]),
    ]);
  }

  emails(applicationId: string, limit: number) {
    return this.prisma.client.email.findMany({
      where: { applicationId },
      orderBy: { createdAt: 'desc' },
      take: limit,
      select: { id: true, kind: true, toAddress: true, subject: true, textBody: true, status: true, createdAt: true, sentAt: true },
    });
  }

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
