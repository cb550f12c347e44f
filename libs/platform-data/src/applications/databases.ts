import type { ApplicationId, OwnerId } from '../ids.js';
import type { PlatformInfrastructure } from '../infrastructure.js';
import { withAdvisoryLock } from '../sign-in-services/advisory-lock.js';

/** An application's own database: its names and its role's password as an envelope (bytes). */
export interface ApplicationDatabaseRow {
  databaseName: string;
  roleName: string;
  password: Uint8Array;
}

export interface NewApplicationDatabase extends ApplicationDatabaseRow {
  ownerId: OwnerId;
}

const ROW = { databaseName: true, roleName: true, password: true } as const;

/** application_databases: one per application, counted per owner against the plan's allowance. */
export class ApplicationDatabases {
  constructor(private readonly platform: PlatformInfrastructure) {}

  find(applicationId: ApplicationId) {
    return this.platform.prisma.applicationDatabase.findUnique({ where: { applicationId }, select: { ...ROW, createdAt: true } });
  }

  /** Application databases the owner holds (they count against the plan's allowance). */
  countForOwner(ownerId: OwnerId): Promise<number> {
    return this.platform.prisma.applicationDatabase.count({ where: { ownerId } });
  }

  /** Every application database with its role's password envelope (what the platform's PgBouncer must know). */
  listAll(): Promise<(ApplicationDatabaseRow & { applicationId: string })[]> {
    return this.platform.prisma.applicationDatabase.findMany({ select: { ...ROW, applicationId: true }, orderBy: { createdAt: 'asc' } });
  }

  /**
   * Serialises rewriting the platform's PgBouncer configuration (each writer lists every database
   * and writes them all: two at once could otherwise leave out the other's new one).
   */
  withPoolerLock<T>(fn: () => Promise<T>): Promise<T> {
    return withAdvisoryLock(this.platform, 'slipway-app-database-pooler:', 'all', fn);
  }

  /** Records a database that provisioning just created on the server for the application. */
  create(applicationId: ApplicationId, database: NewApplicationDatabase): Promise<ApplicationDatabaseRow> {
    const { ownerId, databaseName, roleName, password } = database;
    return this.platform.prisma.applicationDatabase.create({
      data: { applicationId, ownerId, databaseName, roleName, password: Buffer.from(password) },
      select: ROW,
    });
  }

  /** Size on disk; null when the database is not (or no longer) on this server. */
  async sizeBytes(databaseName: string): Promise<number | null> {
    try {
      const rows = await this.platform.prisma.$queryRaw<
        { size: bigint | null }[]
      >`SELECT pg_database_size(datname) AS size FROM pg_database WHERE datname = ${databaseName}`;
      return rows[0]?.size === undefined || rows[0].size === null ? null : Number(rows[0].size);
    } catch {
      return null;
    }
  }
}
