import type { IssuedToken } from '@slipway/crypto';
import type { PrismaService } from '../common/prisma.service.js';

/** How one credential table is laid out: whom a row belongs to, where its hash goes, what a rotation keeps. */
export interface CredentialTable {
  model: 'apiKey' | 'personalAccessToken';
  scope: 'applicationId' | 'ownerId';
  hash: 'keyHash' | 'tokenHash';
  /** Columns a replacement takes over from the credential it replaces (a token keeps its expiry). */
  carried: readonly 'expiresAt'[];
}

/** Project API keys: one application's (`slw_key_…`). */
export const API_KEYS: CredentialTable = { model: 'apiKey', scope: 'applicationId', hash: 'keyHash', carried: [] };
/** Personal access tokens: the owner's (`slw_pat_…`, not tied to one application). */
export const PERSONAL_ACCESS_TOKENS: CredentialTable = { model: 'personalAccessToken', scope: 'ownerId', hash: 'tokenHash', carried: ['expiresAt'] };

/** A credential as listed: never its hash. */
export interface CredentialRecord {
  id: string;
  name: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  expiresAt?: Date | null;
}

type Fields = Record<string, unknown>;
/** The part of a Prisma model delegate both tables share. */
interface Delegate {
  findMany(args: { where: Fields; orderBy: Fields[]; select: Fields }): Promise<CredentialRecord[]>;
  create(args: { data: Fields; select: Fields }): Promise<CredentialRecord>;
  updateMany(args: { where: Fields; data: Fields }): Promise<{ count: number }>;
  updateManyAndReturn(args: { where: Fields; data: Fields; select: Fields }): Promise<Fields[]>;
}
interface Client {
  apiKey: unknown;
  personalAccessToken: unknown;
}

/**
 * The one lifecycle query set of both credential tables: list, issue, rename, revoke, rotate —
 * every query scoped by the owning application or owner, so another scope's id matches nothing.
 */
export class CredentialStore {
  private readonly view: Fields;

  constructor(
    private readonly prisma: PrismaService,
    private readonly table: CredentialTable,
  ) {
    this.view = { id: true, name: true, prefix: true, createdAt: true, lastUsedAt: true, revokedAt: true, ...Object.fromEntries(table.carried.map((c) => [c, true])) };
  }

  list(scopeId: string): Promise<CredentialRecord[]> {
    return this.rows().findMany({ where: { [this.table.scope]: scopeId }, orderBy: [{ revokedAt: { sort: 'desc', nulls: 'first' } }, { createdAt: 'desc' }], select: this.view });
  }

  create(scopeId: string, name: string, issued: IssuedToken): Promise<CredentialRecord> {
    return this.rows().create({ data: { [this.table.scope]: scopeId, name, prefix: issued.prefix, [this.table.hash]: issued.hash }, select: this.view });
  }

  async rename(scopeId: string, id: string, name: string): Promise<boolean> {
    const { count } = await this.rows().updateMany({ where: { id, [this.table.scope]: scopeId }, data: { name } });
    return count > 0;
  }

  /** Revokes a live credential; false when there is no such live one in this scope. */
  async revoke(scopeId: string, id: string, at: Date): Promise<boolean> {
    const { count } = await this.rows().updateMany({ where: { id, [this.table.scope]: scopeId, revokedAt: null }, data: { revokedAt: at } });
    return count > 0;
  }

  /** Revokes `id` and issues its replacement under the same name (and carried columns) in one transaction. */
  rotate(scopeId: string, id: string, issued: IssuedToken): Promise<CredentialRecord | null> {
    return this.prisma.client.$transaction(async (tx) => {
      const rows = this.rows(tx as unknown as Client);
      const kept = { name: true, ...Object.fromEntries(this.table.carried.map((c) => [c, true])) };
      const [old] = await rows.updateManyAndReturn({ where: { id, [this.table.scope]: scopeId, revokedAt: null }, data: { revokedAt: new Date() }, select: kept });
      if (!old) return null;
      return rows.create({ data: { ...old, [this.table.scope]: scopeId, prefix: issued.prefix, [this.table.hash]: issued.hash }, select: this.view });
    });
  }

  private rows(client: Client = this.prisma.client as unknown as Client): Delegate {
    // Both delegates take the same arguments for these calls; the table description names the columns.
    return client[this.table.model] as Delegate;
  }
}
