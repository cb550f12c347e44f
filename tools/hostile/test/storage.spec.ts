/**
 * Storage (issue 27): a tenant uploads a highly compressible archive — a few MiB that unpack to
 * about 500 MiB, within the upload limits (UPLOAD_MAX_UNPACKED_BYTES 1 GiB, compression ratio
 * under 100) — whose deploy fails at analyze. Before sources were compressed and deleted, such an
 * upload stayed in blob storage as a 500 MiB tar for good. Now: nothing of it is left in the blob
 * directory once the deploy ended, and a victim's deploy (another owner) and a sign-up of one of its
 * users succeed meanwhile. With
 * a plan whose storage quota is smaller than the source, the same upload is refused at once with
 * `413 storage_quota_exceeded` naming usage and quota, and nothing of it is kept either.
 */
import { randomBytes } from 'node:crypto';
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { tarGzOf, waitFor } from '@slipway/testing';
import { expectNone } from './support/evidence.js';
import { fixtureCopy } from './support/host.js';
import { HostilePlatform, type Account, type Task } from './support/platform.js';

const MiB = 1024 * 1024;
/** Five files of 99 MiB of zeros (the per-file limit is 100 MiB) and 5.5 MiB that do not compress. */
const ZERO_FILES = 5;
const ZERO_FILE_BYTES = 99 * MiB;
const RANDOM_BYTES = 5.5 * MiB;
const UNPACKED = ZERO_FILES * ZERO_FILE_BYTES + RANDOM_BYTES;

/** The bomb: a tar.gz of a few MiB, with a package.json that is not JSON (the deploy fails at analyze). */
function compressibleArchive(): Promise<Buffer> {
  const zeros = Buffer.alloc(MiB);
  return tarGzOf([
    { name: 'package.json', content: Buffer.from('{ "name": "bomb", not json') },
    { name: 'noise.bin', content: randomBytes(RANDOM_BYTES) },
    ...Array.from({ length: ZERO_FILES }, (_, n) => ({ name: `zeros-${n}.bin`, size: ZERO_FILE_BYTES, fill: zeros })),
  ]);
}

/** `POST /api/v1/deploy` with one archive part, as any HTTP client of the tenant's sends it. */
async function deployArchive(gateway: number, account: Account, archive: Buffer): Promise<{ status: number; body: Record<string, unknown> }> {
  const boundary = `----hostile${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="archive"; filename="bomb.tar.gz"\r\nContent-Type: application/gzip\r\n\r\n`);
  const body = Buffer.concat([head, archive, Buffer.from(`\r\n--${boundary}--\r\n`)]);
  const response = await fetch(`http://127.0.0.1:${gateway}/api/v1/deploy`, {
    method: 'POST',
    headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    body,
    signal: AbortSignal.timeout(120_000),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Every blob (relative path → bytes) under the platform's blob directory. */
async function blobListing(dir: string): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  const walk = async (at: string, prefix: string): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true }).catch(() => [])) {
      if (entry.isDirectory()) await walk(join(at, entry.name), `${prefix}${entry.name}/`);
      else found.set(`${prefix}${entry.name}`, (await stat(join(at, entry.name)).catch(() => ({ size: -1 }))).size);
    }
  };
  await walk(dir, '');
  return found;
}

const total = (listing: Map<string, number>) => [...listing.values()].reduce((sum, n) => sum + n, 0);

describe('storage: a highly compressible upload that fails at analyze', () => {
  let platform: HostilePlatform | undefined;
  let blobs: string;
  let archive: Buffer;
  const cleanup: string[] = [];

  beforeAll(async () => {
    // The `free` plan's quota is small here; the tenants are on `pro` (the default quota, 20 GiB).
    platform = await HostilePlatform.start('storage', { env: { STORAGE_QUOTAS: 'free=4MiB' } });
    blobs = join(platform.home, 'blobs');
    archive = await compressibleArchive();
  }, 240_000);

  afterAll(async () => {
    await platform?.stop();
    await Promise.all(cleanup.map((dir) => rm(dir, { recursive: true, force: true })));
  }, 60_000);

  it('leaves nothing of it in blob storage once the deploy failed, while a victim deploys', async () => {
    const attacker = await platform!.bootstrap('storage-attacker@hostile.example', 'Storage Attacker');
    const victim = await platform!.bootstrap('storage-victim@hostile.example', 'Storage Victim');
    const victimDir = await fixtureCopy('static-site');
    cleanup.push(victimDir);
    expect(archive.length).toBeLessThan(10 * MiB);
    expect(UNPACKED / archive.length).toBeLessThan(100);
    const before = await blobListing(blobs);

    await platform!.enableSignIn(victim);
    const [accepted, victimTask, signUp] = await Promise.all([
      deployArchive(platform!.ports.gateway, attacker, archive),
      platform!.deploy(victim, victimDir),
      platform!.signUp(victim, 'visitor@storage.example'),
    ]);
    expect(accepted).toMatchObject({ status: 202 });
    const taskId = String(accepted.body['taskId']);
    const attack = await waitFor(
      async () => {
        const task = await platform!.task(attacker, taskId);
        return task.status === 'succeeded' || task.status === 'failed' ? task : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 500, what: 'the compressible deploy to end' },
    );

    // What the victim's release stores is the victim's; everything else must be as before.
    const victimKeys = new Set(
      (
        await platform!.query<{ artifact_key: string }>(
          `SELECT r.artifact_key FROM releases r JOIN applications a ON a.id = r.application_id WHERE a.id = $1`,
          [victim.applicationId],
        )
      ).map((r) => r.artifact_key),
    );
    const leftOver = async () => {
      const now = await blobListing(blobs);
      return [...now].filter(([key]) => !before.has(key) && !victimKeys.has(key) && !key.startsWith('.tmp/'));
    };
    const settled = await waitFor(async () => ((await leftOver()).length === 0 ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 250,
      what: 'the blob directory to hold nothing of the failed deploy',
    }).catch(() => false);
    const after = await blobListing(blobs);
    const violations: string[] = [];
    if (attack.status !== 'failed') violations.push(`the compressible deploy ${attack.status} (expected failed at analyze)`);
    if (!settled) for (const [key, bytes] of await leftOver()) violations.push(`left in blob storage after the deploy ended: ${key} (${bytes} bytes)`);
    if (signUp.status !== 200) violations.push(`the victim's sign-up answered ${signUp.status}: ${signUp.body}`);
    if ((victimTask as Task).status !== 'succeeded')
      violations.push(`the victim's deploy ${(victimTask as Task).status}: ${JSON.stringify((victimTask as Task).error)}`);
    expectNone('the compressible upload', violations, {
      archiveBytes: archive.length,
      unpackedBytes: UNPACKED,
      attack: { status: attack.status, error: attack.error },
      blobBytes: { before: total(before), after: total(after) },
      worker: platform!.serviceLog('build-worker', 20),
    });
    expect(attack.error).toMatchObject({ code: 'invalid_package_json', step: 'analyze' });
    console.log(
      `storage: a ${(archive.length / MiB).toFixed(1)} MiB archive unpacking to ${(UNPACKED / MiB).toFixed(0)} MiB failed at analyze; blob directory ${total(before)} bytes before, ${total(after)} after (the victim's release: ${total(after) - total(before)} bytes)`,
    );
    expect(total(after) - [...victimKeys].reduce((sum, key) => sum + (after.get(key) ?? 0), 0)).toBe(total(before));
  });

  it('refuses the same upload with 413 storage_quota_exceeded on a plan whose quota it exceeds, and keeps nothing of it', async () => {
    const tenant = await platform!.bootstrap('storage-quota@hostile.example', 'Storage Quota');
    await platform!.query(`UPDATE owners SET plan = 'free' WHERE id = $1`, [tenant.ownerId]);
    const before = await blobListing(blobs);
    const refused = await deployArchive(platform!.ports.gateway, tenant, archive);
    expect(refused.status).toBe(413);
    expect(refused.body).toMatchObject({ code: 'storage_quota_exceeded', quotaBytes: 4 * MiB, usedBytes: 0 });
    expect(String(refused.body['error'])).toMatch(/over the free plan's storage quota of 4\.0 MiB/);
    expect(await blobListing(blobs)).toEqual(before);
    expect(
      await platform!.query(`SELECT d.id FROM deployments d JOIN applications a ON a.id = d.application_id WHERE a.owner_id = $1`, [tenant.ownerId]),
    ).toEqual([]);
  });
});
