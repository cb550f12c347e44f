import { Injectable } from '@nestjs/common';
import type { CredentialView, ServerView } from '@slipway/contract';
import { issueToken } from '@slipway/crypto';
import { ApiException } from '@slipway/server';
import { parseBody } from '../common/body.js';
import { CredentialNameBody } from '../common/credential-name.dto.js';
import { isUuid } from '../common/ids.js';
import { DashboardApiKeysRepository } from './api-keys.repository.js';

const HINT = 'Send {"name"}.';

/** Project API keys of one application. The full key is in exactly one response: the one that issued it. */
@Injectable()
export class DashboardApiKeysService {
  constructor(private readonly keys: DashboardApiKeysRepository) {}

  async list(applicationId: string): Promise<{ keys: ServerView<CredentialView>[] }> {
    return { keys: await this.keys.list(applicationId) };
  }

  async create(applicationId: string, body: unknown) {
    const { name } = parseBody(CredentialNameBody, body, HINT);
    const issued = issueToken('api_key');
    return { ...(await this.keys.create(applicationId, name, issued)), key: issued.token };
  }

  async rename(applicationId: string, id: string, body: unknown) {
    const { name } = parseBody(CredentialNameBody, body, HINT);
    if (!isUuid(id) || !(await this.keys.rename(applicationId, id, name))) throw notFound();
    return { id, name };
  }

  async rotate(applicationId: string, id: string) {
    const issued = issueToken('api_key');
    const key = isUuid(id) ? await this.keys.rotate(applicationId, id, issued) : null;
    if (!key) throw notFound();
    return { ...key, key: issued.token, replaces: id };
  }

  async revoke(applicationId: string, id: string) {
    if (!isUuid(id) || (await this.keys.revoke(applicationId, id, new Date())) === null) throw notFound();
    return { id, revoked: true };
  }
}

function notFound() {
  return new ApiException('not_found', 'No such live key for this application.');
}
