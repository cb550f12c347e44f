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
  /**
   * local sandbox: the port the analyzer found the server listening on instead of PORT
   * (`spec.port.fixed`). The sandbox starts routed there (no platform port forwarded into it takes
   * it); the port the app is really found listening on decides in the end.
   */
  fixedPort?: number;
}

/** An app that ignores PORT and listens on one port of its own: `port` reaches it there. */
export interface PortFound {
  /** Where it listens (inside its sandbox, or on the host unsandboxed). */
  port: number;
  /** The PORT it was given. */
  envPort: number;
}

export interface RunningRelease {
  releaseId: string;
  /** Where the edge proxies to. */
  host: string;
  port: number;
  /** Set when the app listens on a port of its own instead of PORT (the driver routes `port` there). */
  readonly portFound?: PortFound;
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
