import type { IssuedToken } from '@slipway/crypto';
import type { ApplicationId, OwnerId } from '../ids.js';
import type { PlatformInfrastructure } from '../infrastructure.js';

/** How one credential table is laid out: whom a row belongs to, where its hash goes, what a rotation keeps. */
export interface CredentialTable {
  model: 'apiKey' | 'personalAccessToken';
  scope: 'applicationId' | 'ownerId';
  hash: 'keyHash' | 'tokenHash';
  /** Columns a replacement takes over from the credential it replaces (a token keeps its expiry). */
  carried: readonly 'expiresAt'[];
  /** The named statement that records use (`last_used_at`), and its SQL. */
  touch: { name: string; text: string };
}

/** Project API keys: one application's (`slw_key_…`). */
export const API_KEYS: CredentialTable = {
  model: 'apiKey',
  scope: 'applicationId',
  hash: 'keyHash',
  carried: [],
  touch: { name: 'gateway_api_keys_touch', text: 'UPDATE api_keys SET last_used_at = now() WHERE id = ANY($1::uuid[]) AND revoked_at IS NULL' },
};
/** Personal access tokens: the owner's (`slw_pat_…`, not tied to one application). */
export const PERSONAL_ACCESS_TOKENS: CredentialTable = {
  model: 'personalAccessToken',
  scope: 'ownerId',
  hash: 'tokenHash',
  carried: ['expiresAt'],
  touch: {
    name: 'gateway_personal_access_tokens_touch',
    text: 'UPDATE personal_access_tokens SET last_used_at = now() WHERE id = ANY($1::uuid[]) AND revoked_at IS NULL',
  },
};

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
 * The one lifecycle of both credential tables: list, issue, rename, revoke, rotate, record use —
 * every lifecycle query scoped by the owning application or owner (`Scope`), so another scope's
 * id matches nothing.
 */
export class CredentialStore<Scope extends ApplicationId | OwnerId> {
  private readonly view: Fields;

  constructor(
    private readonly platform: PlatformInfrastructure,
    private readonly table: CredentialTable,
  ) {
    this.view = {
      id: true,
      name: true,
      prefix: true,
      createdAt: true,
      lastUsedAt: true,
      revokedAt: true,
      ...Object.fromEntries(table.carried.map((c) => [c, true])),
    };
  }

  list(scopeId: Scope): Promise<CredentialRecord[]> {
    return this.rows().findMany({
      where: { [this.table.scope]: scopeId },
      orderBy: [{ revokedAt: { sort: 'desc', nulls: 'first' } }, { createdAt: 'desc' }],
      select: this.view,
    });
  }

  create(scopeId: Scope, name: string, issued: IssuedToken): Promise<CredentialRecord> {
    return this.rows().create({ data: { [this.table.scope]: scopeId, name, prefix: issued.prefix, [this.table.hash]: issued.hash }, select: this.view });
  }

  async rename(scopeId: Scope, id: string, name: string): Promise<boolean> {
    const { count } = await this.rows().updateMany({ where: { id, [this.table.scope]: scopeId }, data: { name } });
    return count > 0;
  }

  /** Revokes a live credential; false when there is no such live one in this scope. */
  async revoke(scopeId: Scope, id: string, at: Date): Promise<boolean> {
    const { count } = await this.rows().updateMany({ where: { id, [this.table.scope]: scopeId, revokedAt: null }, data: { revokedAt: at } });
    return count > 0;
  }

  /** Revokes `id` and issues its replacement under the same name (and carried columns) in one transaction. */
  rotate(scopeId: Scope, id: string, issued: IssuedToken): Promise<CredentialRecord | null> {
    return this.platform.prisma.$transaction(async (tx) => {
      const rows = this.rows(tx as unknown as Client);
      const kept = { name: true, ...Object.fromEntries(this.table.carried.map((c) => [c, true])) };
      const [old] = await rows.updateManyAndReturn({
        where: { id, [this.table.scope]: scopeId, revokedAt: null },
        data: { revokedAt: new Date() },
        select: kept,
      });
      if (!old) return null;
      return rows.create({ data: { ...old, [this.table.scope]: scopeId, prefix: issued.prefix, [this.table.hash]: issued.hash }, select: this.view });
    });
  }

  /**
   * Records use of several credentials at once (`last_used_at = now()`); revoked ones are left
   * alone. Takes the ids a prefix lookup answered (the presented secret matched them), not a
   * scope. A named statement, like the lookup it follows.
   */
  async touchLastUsed(ids: readonly string[]): Promise<void> {
    await this.platform.pool.query({ ...this.table.touch, values: [ids] });
  }

  private rows(client: Client = this.platform.prisma as unknown as Client): Delegate {
    // Both delegates take the same arguments for these calls; the table description names the columns.
    return client[this.table.model] as Delegate;
  }
}
