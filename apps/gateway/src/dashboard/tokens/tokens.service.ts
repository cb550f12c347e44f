import { Injectable } from '@nestjs/common';
import type { CredentialView, ServerView } from '@slipway/contract';
import { issueToken } from '@slipway/crypto';
import { ApiException } from '@slipway/server';
import { parseBody } from '../common/body.js';
import { CredentialNameBody } from '../common/credential-name.dto.js';
import { isUuid } from '../common/ids.js';
import { TokensRepository } from './tokens.repository.js';

const HINT = 'Send {"name"}.';

/** The owner's personal access tokens (`slw_pat_…`, for the platform sign-in calls). Shown once. */
@Injectable()
export class TokensService {
  constructor(private readonly tokens: TokensRepository) {}

  async list(ownerId: string): Promise<{ tokens: ServerView<CredentialView>[] }> {
    return { tokens: await this.tokens.list(ownerId) };
  }

  async create(ownerId: string, body: unknown) {
    const { name } = parseBody(CredentialNameBody, body, HINT);
    const issued = issueToken('personal_access_token');
    return { ...(await this.tokens.create(ownerId, name, issued)), token: issued.token };
  }

  async rename(ownerId: string, id: string, body: unknown) {
    const { name } = parseBody(CredentialNameBody, body, HINT);
    if (!isUuid(id) || !(await this.tokens.rename(ownerId, id, name))) throw notFound();
    return { id, name };
  }

  async rotate(ownerId: string, id: string) {
    const issued = issueToken('personal_access_token');
    const token = isUuid(id) ? await this.tokens.rotate(ownerId, id, issued) : null;
    if (!token) throw notFound();
    return { ...token, token: issued.token, replaces: id };
  }

  async revoke(ownerId: string, id: string) {
    if (!isUuid(id) || !(await this.tokens.revoke(ownerId, id, new Date()))) throw notFound();
    return { id, revoked: true };
  }
}

function notFound() {
  return new ApiException('not_found', 'No such live token.');
}
