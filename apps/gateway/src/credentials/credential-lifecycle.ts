import type { CredentialView, ServerView } from '@slipway/contract';
import { issueToken, type TokenKind } from '@slipway/crypto';
import type { ApplicationId, CredentialStore, OwnerId } from '@slipway/platform-data';
import { ApiException } from '@slipway/service-kit';
import { isUuid, parseBody } from '../common/index.js';
import { CredentialNameBody } from './credential-name.dto.js';

/** What differs between API keys and personal access tokens, as the dashboard API shows them. */
export interface CredentialKind {
  /** The token format issued (`slw_key_…` or `slw_pat_…`). */
  issue: TokenKind;
  /** The field that carries the full secret, in exactly one response: the one that issued it. */
  secretField: 'key' | 'token';
  /** The field of the list answer. */
  listField: 'keys' | 'tokens';
  /** The 404 message for an id that is not a live credential of this scope. */
  notFound: string;
}

/** The table of one kind, and how the id of the principal a route guard resolved becomes its scope. */
export interface CredentialScope<Scope extends ApplicationId | OwnerId> {
  store: CredentialStore<Scope>;
  scope: (id: string) => Scope;
}

const HINT = 'Send {"name"}.';

/** The one lifecycle of a credential: list, create, rename, rotate, revoke. Shown once, scoped always. */
export class CredentialLifecycle<Scope extends ApplicationId | OwnerId = ApplicationId | OwnerId> {
  private readonly store: CredentialStore<Scope>;
  private readonly scope: (id: string) => Scope;

  constructor(
    table: CredentialScope<Scope>,
    private readonly kind: CredentialKind,
  ) {
    this.store = table.store;
    this.scope = table.scope;
  }

  async list(scopeId: string): Promise<Record<string, ServerView<CredentialView>[]>> {
    return { [this.kind.listField]: await this.store.list(this.scope(scopeId)) };
  }

  async create(scopeId: string, body: unknown) {
    const { name } = parseBody(CredentialNameBody, body, HINT);
    const issued = issueToken(this.kind.issue);
    return { ...(await this.store.create(this.scope(scopeId), name, issued)), [this.kind.secretField]: issued.token };
  }

  async rename(scopeId: string, id: string, body: unknown) {
    const { name } = parseBody(CredentialNameBody, body, HINT);
    if (!isUuid(id) || !(await this.store.rename(this.scope(scopeId), id, name))) throw this.notFound();
    return { id, name };
  }

  async rotate(scopeId: string, id: string) {
    const issued = issueToken(this.kind.issue);
    const replacement = isUuid(id) ? await this.store.rotate(this.scope(scopeId), id, issued) : null;
    if (!replacement) throw this.notFound();
    return { ...replacement, [this.kind.secretField]: issued.token, replaces: id };
  }

  async revoke(scopeId: string, id: string) {
    if (!isUuid(id) || !(await this.store.revoke(this.scope(scopeId), id, new Date()))) throw this.notFound();
    return { id, revoked: true };
  }

  private notFound(): ApiException {
    return new ApiException('not_found', this.kind.notFound);
  }
}
