import type { ApplicationStorageView } from '../api/types.js';
import type { Resource } from '../api/use-resource.js';
import { ErrorNotice } from './ui.js';
import { formatBytes } from '../format.js';

/**
 * What the application stores in blob storage (sources of deployments in progress, kept
 * releases) and where its owner stands against the plan's storage quota: deploys beyond it are
 * refused with `storage_quota_exceeded`.
 */
export function StorageCard({ storage }: { storage: Resource<ApplicationStorageView> }) {
  if (!storage.data) return storage.error ? <ErrorNotice error={storage.error} /> : null;
  const { sources, releases, caches, owner } = storage.data;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  return (
    <div className="card" aria-labelledby="storage-heading">
      <h2 id="storage-heading">Storage</h2>
      <dl className="facts">
        <dt>Releases</dt>
        <dd>
          {plural(releases.count, 'release')}, {formatBytes(releases.bytes)}{' '}
          <span className="muted">(the live one and the newest {releases.kept} are kept)</span>
        </dd>
        <dt>Sources</dt>
        <dd>
          {plural(sources.count, 'source')}, {formatBytes(sources.bytes)} <span className="muted">(compressed; deleted when the deployment ends)</span>
        </dd>
        <dt>Build caches</dt>
        <dd>{caches.bytes === null ? <span className="muted">on the build machines, not counted</span> : formatBytes(caches.bytes)}</dd>
      </dl>
      <p>
        All your applications store {formatBytes(owner.usedBytes)} of the {owner.plan} plan’s {formatBytes(owner.quotaBytes)}.
      </p>
      <meter min={0} max={owner.quotaBytes} high={owner.quotaBytes * 0.9} value={Math.min(owner.usedBytes, owner.quotaBytes)} aria-label="Storage used" />
    </div>
  );
}
