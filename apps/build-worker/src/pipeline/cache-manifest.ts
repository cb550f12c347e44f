import { createHmac, timingSafeEqual } from 'node:crypto';
import { posix } from 'node:path';

/** Everything an entry is for: another application, lockfile, package manager or Node never matches. */
export interface CacheKey {
  applicationId: string;
  lockfile: string;
  lockfileSha256: string;
  manager: string;
  node: string;
  platform: string;
  arch: string;
}

/** One path of the cached `node_modules`, relative to it (posix separators). */
export type ManifestEntry =
  | { path: string; type: 'dir'; mode: number }
  | { path: string; type: 'file'; mode: number; size: number; sha256: string }
  | { path: string; type: 'link'; target: string };

export interface Manifest {
  version: 1;
  key: CacheKey;
  createdAt: string;
  bytes: number;
  /** Parents before their children. */
  entries: ManifestEntry[];
}

/** Why an entry is not served; the entry is discarded. */
export class CacheEntryRejected extends Error {
  override readonly name = 'CacheEntryRejected';
}

const MAGIC = 'slipway-dependency-cache v1';

/** The sealing key, derived from the master key so there is nothing more to configure or leak. */
export function cacheSealKey(masterKeyBase64: string): Buffer {
  return createHmac('sha256', Buffer.from(masterKeyBase64, 'base64')).update('slipway:dependency-cache:v1').digest();
}

/**
 * The manifest file: one header line `slipway-dependency-cache v1 <bytes> <hmac>` then the JSON body.
 * The HMAC covers the body, which carries the key (application id included), so an entry moved to
 * another application or lockfile, or a body edited without the master key, does not open.
 * `bytes` is repeated in the header only so eviction can size entries without parsing bodies.
 */
export function sealManifest(sealKey: Buffer, manifest: Manifest): Buffer {
  const body = JSON.stringify(manifest);
  const mac = createHmac('sha256', sealKey).update(body).digest('hex');
  return Buffer.from(`${MAGIC} ${manifest.bytes} ${mac}\n${body}`);
}

/** The `bytes` of a manifest header (unauthenticated: for eviction only); null when unreadable. */
export function headerBytes(head: string): number | null {
  const match = /^slipway-dependency-cache v1 (\d+) [0-9a-f]{64}\n/.exec(head);
  return match ? Number(match[1]) : null;
}

function sameKey(a: CacheKey, b: CacheKey): boolean {
  const fields: (keyof CacheKey)[] = ['applicationId', 'lockfile', 'lockfileSha256', 'manager', 'node', 'platform', 'arch'];
  return fields.every((field) => a[field] === b[field]);
}

/** A relative posix path that stays inside its root: no `..`, no absolute, no empty segment. */
export function isTreePath(path: string): boolean {
  if (!path || path.includes('\0') || path.startsWith('/')) return false;
  return path.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

/**
 * Whether a link at `path` (relative to node_modules) pointing at `target` resolves inside the
 * workspace that holds node_modules. Absolute targets never do: the workspace moves between builds.
 */
export function linkStaysInTree(path: string, target: string): boolean {
  if (!target || target.includes('\0') || posix.isAbsolute(target)) return false;
  const resolved = posix.normalize(posix.join('node_modules', posix.dirname(path), target));
  return resolved !== '..' && !resolved.startsWith('../');
}

/** Checks the seal, the key and every path; throws CacheEntryRejected with the reason. */
export function openManifest(sealKey: Buffer, raw: Buffer, expected: CacheKey): Manifest {
  const newline = raw.indexOf(0x0a);
  const header = newline < 0 ? '' : raw.subarray(0, newline).toString('utf8');
  const mac = /^slipway-dependency-cache v1 \d+ ([0-9a-f]{64})$/.exec(header)?.[1];
  if (!mac) throw new CacheEntryRejected('the manifest header is malformed');
  const body = raw.subarray(newline + 1);
  const actual = createHmac('sha256', sealKey).update(body).digest();
  if (!timingSafeEqual(actual, Buffer.from(mac, 'hex')))
    throw new CacheEntryRejected('the manifest seal does not verify (edited, or not written by this platform)');
  const manifest = JSON.parse(body.toString('utf8')) as Manifest;
  if (manifest.version !== 1 || !sameKey(manifest.key, expected))
    throw new CacheEntryRejected('the manifest belongs to another application, lockfile or toolchain');
  for (const entry of manifest.entries) {
    if (!isTreePath(entry.path)) throw new CacheEntryRejected(`the manifest holds an invalid path ${JSON.stringify(entry.path)}`);
    if (entry.type === 'link' && !linkStaysInTree(entry.path, entry.target))
      throw new CacheEntryRejected(`the manifest holds a link leaving the tree: ${entry.path}`);
  }
  return manifest;
}
