import type { RuntimeReport } from './watch/release-watch.js';

/** What a runtime needs to run one Node release. */
export interface ReleaseToRun {
  releaseId: string;
  applicationId: string;
  slug: string;
  /** `releases/<releaseId>.tar.gz` in blob storage. */
  artifactKey: string;
  /** Shell command run in the release's root, e.g. `npm run start`. */
  startCommand: string;
  /** The app's whole environment except PORT (secrets, DATABASE_URL, SERVICE_AUTH_*). */
  env: Record<string, string>;
  /**
   * The exact Node.js version the release was built with (`spec.nodeVersion`); it runs on the same
   * one. Absent or null: the platform's own Node.
   */
  nodeVersion?: string | null;
  /**
   * local driver: the loopback port to listen on (the nginx data plane's free slot for the
   * application); absent or taken by then: any free port.
   */
  port?: number;
  /**
   * local sandbox: host loopback ports this release may reach besides every app's (the platform's
   * PgBouncer, for an application that has a database). Set by the platform, never by a tenant.
   */
  hostPorts?: number[];
}

export interface RunningRelease {
  releaseId: string;
  /** Where the edge proxies to. */
  host: string;
  port: number;
  /** The last part of the release's output (stdout and stderr). */
  logTail(): string;
  /** Its crashes, restarts and stderr error lines so far (raw text); absent: this runtime does not watch them. */
  report?(): RuntimeReport | undefined | Promise<RuntimeReport | undefined>;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** A release that never became healthy; the log tail says why. */
export class UnhealthyReleaseError extends Error {
  override readonly name = 'UnhealthyReleaseError';
  constructor(
    message: string,
    readonly logTail: string,
  ) {
    super(message);
  }
}

/**
 * Runs Node releases. `start` resolves only once the release answers HTTP (healthy) and rejects
 * with `UnhealthyReleaseError` otherwise, having cleaned up after itself.
 */
export interface RuntimeDriver {
  readonly name: 'local' | 'kubernetes';
  start(release: ReleaseToRun): Promise<RunningRelease>;
}
