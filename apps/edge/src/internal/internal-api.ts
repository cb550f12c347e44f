import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { DependencyProbe } from '@slipway/service-kit';
import { BlobNotFoundError } from '@slipway/blob';
import type { AppLogs } from './app-logs.js';
import {
  APPLIED_RELEASE_PATTERN,
  SWITCH_RELEASE_PATTERN,
  RELEASE_ARTIFACT_PATTERN,
  RELEASE_START_PATTERN,
  isEdgeInternalToken,
  isReleaseArtifactToken,
} from '@slipway/messaging';
import { UnhealthyReleaseError, type PortFound } from '@slipway/runtime';
import { SandboxUnavailableError } from '@slipway/sandbox';

export interface InternalApiDeps {
  masterKey: string;
  probe: DependencyProbe;
  /**
   * Starts (Node) or unpacks (static) a release; resolves once it can serve, with the port it was
   * found listening on when it ignores PORT (the start's answer carries it as `portFound`).
   */
  startRelease(releaseId: string): Promise<{ portFound?: PortFound } | 'not-found'>;
  logs(releaseId: string): Promise<string | undefined>;
  /** How Node releases are contained here: `on`, or `off` with the reason (the deploy's `unsandboxed_runtime` hazard). */
  sandbox: { status: 'on' } | { status: 'off'; reason: string };
  /** The release's artifact (`.tar.gz`), undefined when there is no such release. */
  artifact(releaseId: string): Promise<Readable | undefined>;
  /** The static cache's bound, use and entries per release (operators; tests check the bound). */
  staticCache(): unknown;
  /** The release this edge (and its data plane) serves for an application now; null when none. */
  appliedRelease(applicationId: string): string | null;
  /** Serves `releaseId` for the application now (before the worker commits it); false when it is not that application's release. */
  switchRelease(applicationId: string, releaseId: string): Promise<boolean>;
  /** HTTPS: the mode and, with ACME, each host's certificate state (issued, renewing, retrying and why). */
  tls(): unknown;
  /** Applications' runtime logs on this host (local driver); undefined: this edge holds none (kubernetes). */
  appLogs?: AppLogs;
}

const LOGS_PATTERN = /^\/_slipway\/releases\/([0-9a-f-]{36})\/logs$/;
const APP_LOGS_PATTERN = /^\/_slipway\/applications\/([0-9a-f-]{36})\/logs(\/follow)?$/;
const UUID = /^[0-9a-f-]{36}$/;

/** `since`/`until` (ms since the epoch), `release` (a uuid), `limit`/`backlog` (whole numbers) of a logs request; a string: what is wrong. */
function logParams(url: string): { since?: number; until?: number; release?: string; limit: number } | string {
  const params = new URL(url, 'http://edge').searchParams;
  const number = (name: string) => {
    const raw = params.get(name);
    if (raw === null) return undefined;
    return /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
  };
  const since = number('since');
  const until = number('until');
  const limit = number('limit') ?? 200;
  const release = params.get('release') ?? undefined;
  if ([since, until, limit].some((n) => Number.isNaN(n))) return 'since, until and limit are whole numbers (ms since the epoch; lines)';
  if (release !== undefined && !UUID.test(release)) return 'release is a release id';
  return { since, until, release, limit };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' }).end(text);
}

/** Health for everyone; the worker hand-off and release logs for holders of the internal token. */
export async function handleInternal(req: IncomingMessage, res: ServerResponse, deps: InternalApiDeps): Promise<boolean> {
  const path = (req.url ?? '/').split('?')[0]!;
  if (path === '/health/live') {
    json(res, 200, { status: 'ok', service: 'edge' });
    return true;
  }
  if (path === '/health/ready') {
    const report = await deps.probe.check();
    json(res, report.status === 'ok' ? 200 : 503, report);
    return true;
  }
  if (!path.startsWith('/_slipway/')) return false;
  // A pod of the kubernetes driver fetches its own release, with a token valid for that release only.
  const artifact = RELEASE_ARTIFACT_PATTERN.exec(path);
  if (artifact && req.method === 'GET') {
    if (!isReleaseArtifactToken(deps.masterKey, artifact[1]!, req.headers.authorization)) {
      json(res, 401, { error: 'a valid artifact token for this release is required' });
      return true;
    }
    const stream = await deps.artifact(artifact[1]!).catch((error: unknown) => (error instanceof BlobNotFoundError ? undefined : Promise.reject(error)));
    if (!stream) json(res, 404, { error: 'no such release' });
    else {
      res.writeHead(200, { 'content-type': 'application/gzip', 'cache-control': 'no-store' });
      await pipeline(stream, res).catch(() => res.destroy());
    }
    return true;
  }
  if (!isEdgeInternalToken(deps.masterKey, req.headers.authorization)) {
    json(res, 401, { error: 'a valid internal token is required' });
    return true;
  }
  const start = RELEASE_START_PATTERN.exec(path);
  if (start && req.method === 'POST') {
    try {
      const outcome = await deps.startRelease(start[1]!);
      if (outcome === 'not-found') json(res, 404, { error: 'no such release' });
      else json(res, 200, { status: 'healthy', sandbox: deps.sandbox, ...(outcome.portFound ? { portFound: outcome.portFound } : {}) });
    } catch (error) {
      if (error instanceof UnhealthyReleaseError) json(res, 422, { error: error.message, logTail: error.logTail.slice(-8000) });
      else if (error instanceof SandboxUnavailableError) json(res, 503, { code: error.code, error: error.message });
      else json(res, 500, { error: (error as Error).message });
    }
    return true;
  }
  const switching = SWITCH_RELEASE_PATTERN.exec(path);
  if (switching && req.method === 'POST') {
    if (await deps.switchRelease(switching[1]!, switching[2]!)) json(res, 200, { releaseId: deps.appliedRelease(switching[1]!) });
    else json(res, 404, { error: 'no such release of this application' });
    return true;
  }
  const applied = APPLIED_RELEASE_PATTERN.exec(path);
  if (applied && req.method === 'GET') {
    json(res, 200, { releaseId: deps.appliedRelease(applied[1]!) });
    return true;
  }
  if (path === '/_slipway/static-cache' && req.method === 'GET') {
    json(res, 200, deps.staticCache());
    return true;
  }
  if (path === '/_slipway/tls' && req.method === 'GET') {
    json(res, 200, deps.tls());
    return true;
  }
  const appLogs = APP_LOGS_PATTERN.exec(path);
  if (appLogs && req.method === 'GET') {
    if (!deps.appLogs) {
      json(res, 501, { error: 'this edge keeps no runtime logs (kubernetes driver: the cluster keeps them; kubectl logs)' });
      return true;
    }
    const params = logParams(req.url ?? '/');
    if (typeof params === 'string') json(res, 400, { error: params });
    else if (appLogs[2]) await deps.appLogs.follow(appLogs[1]!, { release: params.release, since: params.since, backlog: params.limit }, res);
    else json(res, 200, { lines: await deps.appLogs.query(appLogs[1]!, params) });
    return true;
  }
  const logs = LOGS_PATTERN.exec(path);
  if (logs && req.method === 'GET') {
    const text = await deps.logs(logs[1]!);
    if (text === undefined) json(res, 404, { error: 'no logs for this release on this edge' });
    else {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }).end(text);
    }
    return true;
  }
  json(res, 404, { error: 'not found' });
  return true;
}
