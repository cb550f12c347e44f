import { issueToken } from '@slipway/crypto';
import { scratchPlatform } from '../../test/scratch-platform.js';
import type { ApplicationId, OwnerId } from '../ids.js';
import type { PlatformInfrastructure } from '../infrastructure.js';
import type { CredentialsRepository } from './credentials.repository.js';

describe('CredentialsRepository (real Postgres)', () => {
  const scratch = scratchPlatform('pd-credentials', { poolSize: 3 });
  let platform: PlatformInfrastructure;
  let credentials: CredentialsRepository;
  beforeAll(() => {
    ({
      platform,
      data: { credentials },
    } = scratch);
  });

  async function application(): Promise<{ ownerId: OwnerId; applicationId: ApplicationId }> {
    const ownerId = await scratch.owner();
    return { ownerId, applicationId: await scratch.application(ownerId) };
  }
  const lastUsed = async (table: 'api_keys' | 'personal_access_tokens', id: string) =>
    (await platform.pool.query<{ last_used_at: Date | null }>(`SELECT last_used_at FROM ${table} WHERE id = $1`, [id])).rows[0]!.last_used_at;

  it('finds an API key by its prefix, with its application, and records its use only while live', async () => {
    const { applicationId } = await application();
    const issued = issueToken('api_key');
    const created = await credentials.apiKeys.create(applicationId, 'ci', issued);
    expect(await credentials.findApiKeyByPrefix(issued.prefix)).toEqual({
      id: created.id,
      applicationId,
      keyHash: issued.hash,
      revokedAt: null,
      lastUsedAt: null,
    });
    expect(await credentials.findApiKeyByPrefix(issueToken('api_key').prefix)).toBeNull();

    await credentials.apiKeys.touchLastUsed([created.id]);
    expect(await lastUsed('api_keys', created.id)).toBeInstanceOf(Date);
    expect((await credentials.findApiKeyByPrefix(issued.prefix))?.lastUsedAt).toBeInstanceOf(Date);

    const other = await credentials.apiKeys.create(applicationId, 'old', issueToken('api_key'));
    expect(await credentials.apiKeys.revoke(applicationId, other.id, new Date())).toBe(true);
    await credentials.apiKeys.touchLastUsed([other.id]);
    expect(await lastUsed('api_keys', other.id)).toBeNull();
  });

  it('finds a personal access token by its prefix, with its owner and expiry, and records its use', async () => {
    const { ownerId } = await application();
    const issued = issueToken('personal_access_token');
    const created = await credentials.personalAccessTokens.create(ownerId, 'laptop', issued);
    expect(await credentials.findPersonalAccessTokenByPrefix(issued.prefix)).toEqual({
      id: created.id,
      ownerId,
      tokenHash: issued.hash,
      revokedAt: null,
      expiresAt: null,
      lastUsedAt: null,
    });
    expect(await credentials.findPersonalAccessTokenByPrefix(issueToken('personal_access_token').prefix)).toBeNull();
    await credentials.personalAccessTokens.touchLastUsed([created.id]);
    expect(await lastUsed('personal_access_tokens', created.id)).toBeInstanceOf(Date);
  });

  it('lists live credentials first, newest first, never with their hash', async () => {
    const { applicationId } = await application();
    const first = await credentials.apiKeys.create(applicationId, 'first', issueToken('api_key'));
    const second = await credentials.apiKeys.create(applicationId, 'second', issueToken('api_key'));
    await credentials.apiKeys.revoke(applicationId, first.id, new Date());
    const third = await credentials.apiKeys.create(applicationId, 'third', issueToken('api_key'));
    // Distinct times: rows written within one millisecond would tie.
    for (const [i, key] of [first, second, third].entries())
      await platform.prisma.apiKey.update({ where: { id: key.id }, data: { createdAt: new Date(Date.UTC(2026, 0, 1, 0, i)) } });
    const listed = await credentials.apiKeys.list(applicationId);
    expect(listed.map((k) => k.id)).toEqual([third.id, second.id, first.id]);
    expect(Object.keys(listed[0]!).sort()).toEqual(['createdAt', 'id', 'lastUsedAt', 'name', 'prefix', 'revokedAt']);
  });

  it('scopes rename, revoke and rotate to the owning application or owner', async () => {
    const mine = await application();
    const theirs = await application();
    const key = await credentials.apiKeys.create(mine.applicationId, 'ci', issueToken('api_key'));
    expect(await credentials.apiKeys.rename(theirs.applicationId, key.id, 'taken')).toBe(false);
    expect(await credentials.apiKeys.revoke(theirs.applicationId, key.id, new Date())).toBe(false);
    expect(await credentials.apiKeys.rotate(theirs.applicationId, key.id, issueToken('api_key'))).toBeNull();
    expect(await credentials.apiKeys.list(theirs.applicationId)).toEqual([]);
    expect(await credentials.apiKeys.rename(mine.applicationId, key.id, 'deploys')).toBe(true);
    expect((await credentials.apiKeys.list(mine.applicationId)).map((k) => [k.name, k.revokedAt])).toEqual([['deploys', null]]);
  });

  it('rotates a live token: the old one revoked, the new one under the same name and expiry', async () => {
    const { ownerId } = await application();
    const old = await credentials.personalAccessTokens.create(ownerId, 'ci', issueToken('personal_access_token'));
    const expiresAt = new Date(Date.now() + 86_400_000);
    await platform.prisma.personalAccessToken.update({ where: { id: old.id }, data: { expiresAt } });
    const issued = issueToken('personal_access_token');
    const replacement = await credentials.personalAccessTokens.rotate(ownerId, old.id, issued);
    expect(replacement).toMatchObject({ name: 'ci', prefix: issued.prefix, expiresAt, revokedAt: null });
    expect((await credentials.findPersonalAccessTokenByPrefix(old.prefix))?.revokedAt).toBeInstanceOf(Date);
    expect(await credentials.personalAccessTokens.rotate(ownerId, old.id, issueToken('personal_access_token'))).toBeNull();
  });
});
