import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeBlobStoreContract } from '../test/blob-store-contract.js';
import { LocalBlobStore, blobDirFrom, createBlobStore, sourceFileMode, sourceKey } from './index.js';

describeBlobStoreContract('LocalBlobStore (real file system)', async () => {
  const root = await mkdtemp(join(tmpdir(), 'slipway-blob-'));
  return {
    store: new LocalBlobStore(root),
    leftovers: () => readdir(join(root, '.tmp')).catch(() => []),
    close: () => rm(root, { recursive: true, force: true }),
  };
});

describe('source format helpers', () => {
  it('names the source blob of a deployment and normalises modes', () => {
    expect(sourceKey('3f1c0e2a-0000-4000-8000-000000000000')).toBe('sources/3f1c0e2a-0000-4000-8000-000000000000.tar');
    expect(sourceFileMode(0o100755)).toBe(0o755);
    expect(sourceFileMode(0o4744)).toBe(0o755);
    expect(sourceFileMode(0o600)).toBe(0o644);
    expect(sourceFileMode(undefined)).toBe(0o644);
  });

  it('resolves the blob directory from BLOB_DIR or SLIPWAY_HOME', () => {
    expect(blobDirFrom({ BLOB_DIR: '/data/blobs' })).toBe('/data/blobs');
    expect(blobDirFrom({ SLIPWAY_HOME: '/srv/slipway' }, '/x')).toBe('/srv/slipway/blobs');
    expect(blobDirFrom({}, '/repo')).toBe('/repo/.slipway/blobs');
  });

  it('creates the local store when S3_ENDPOINT is not set', () => {
    const store = createBlobStore({ BLOB_DIR: '/data/blobs' });
    expect(store).toBeInstanceOf(LocalBlobStore);
    expect((store as LocalBlobStore).root).toBe('/data/blobs');
  });
});
