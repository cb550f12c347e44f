import type { DeployFinding, DeploymentStatus, DeploymentTask } from './deploy.js';

/**
 * What the dashboard API (`/dashboard/api/…`) answers, as the browser and the CLI receive it:
 * the gateway builds these views (typed with `ServerView<…>`), the dashboard and CLI read them.
 * Timestamps are ISO 8601 strings on the wire.
 */

/** The shape a gateway view may have before JSON: the same fields, `Date` allowed where the wire has a string. */
export type ServerView<T> = T extends string
  ? string extends T
    ? string | Date
    : T
  : T extends readonly (infer U)[]
    ? readonly ServerView<U>[]
    : T extends object
      ? { [K in keyof T]: ServerView<T[K]> }
      : T;

export interface OwnerView {
  id: string;
  email: string;
  name: string | null;
  plan: string;
  databases: { used: number; allowed: number };
}

export interface ApplicationSummary {
  id: string;
  name: string;
  slug: string;
  url: string;
  createdAt?: string;
  latestDeployment?: { id: string; status: DeploymentStatus; createdAt: string } | null;
}

export interface ApplicationDetails extends ApplicationSummary {
  liveReleaseId: string | null;
  signInEnabled: boolean;
  hasDatabase: boolean;
  apiBaseUrl: string;
}

/** An API key or a personal access token as listed (never the secret itself). */
export interface CredentialView {
  id: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export interface DeploymentRow {
  id: string;
  status: DeploymentStatus;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  warningCount: number;
  hazardCount: number;
}

/** A warning or hazard: `code` and `message` always; the rest is what the pipeline knew. */
export interface FindingView extends DeployFinding {
  file?: string;
  line?: number;
  hint?: string;
}

export type DeploymentTaskView = DeploymentTask<FindingView>;

/** What one application stores (`GET /dashboard/api/applications/:appId/storage`), and its owner's quota. */
export interface ApplicationStorageView {
  /** Compressed sources of this application's deployments in progress (deleted when each ends). */
  sources: { count: number; bytes: number };
  /** Kept releases' artifacts (the live one and the newest `kept`; older ones are pruned). */
  releases: { count: number; bytes: number; kept: number };
  /** Build caches are kept on the build workers' disks and not counted here (null: not measured by the gateway). */
  caches: { bytes: number | null };
  /** Everything the owner's applications store, against its plan's quota (`storage_quota_exceeded` beyond). */
  owner: { plan: string; usedBytes: number; quotaBytes: number };
}

/** One kept release (`GET /dashboard/api/applications/:appId/releases`, `slipway releases`). */
export interface ReleaseView {
  id: string;
  deploymentId: string;
  /** `static` or `node`. */
  kind: string;
  createdAt: string;
  /** Bytes of the release's artifact (counted against the owner's storage quota). */
  sizeBytes: number;
  /** Status of the deployment that built it: only a `succeeded` one is a default rollback target. */
  deploymentStatus: string;
  /** The release the application's address serves (a preview's release never is). */
  live: boolean;
  /** The preview that built it (served at `{slug}--{preview}`); null: one of the application's own. */
  preview: string | null;
}

/** What a rollback or promote answers: the release now live, the one it replaced, and the list. */
export interface ReleaseSwitchView {
  liveReleaseId: string;
  previousReleaseId: string | null;
  releases: ReleaseView[];
}

/** A claim of a custom domain: served and trusted only once its TXT record is verified. */
export interface DomainView {
  id: string;
  /** Lower-case ASCII (IDNs as punycode). */
  hostname: string;
  /** The same name as a person reads it (IDNs in Unicode). */
  displayName: string;
  status: 'pending' | 'verified';
  verifiedAt: string | null;
  checkedAt: string | null;
  /** Why the last check failed; null after a successful one. */
  checkError: string | null;
  /** Periodic re-checks in a row that did not find the record (the domain lapses at the platform's limit, 3 by default). */
  failedChecks: number;
  /** The record that proves control of the domain for this claim. */
  record: { name: string; type: 'TXT'; value: string };
  createdAt: string;
  trustedOrigins: string[];
}

export interface DatabaseInfo {
  database: { name: string; createdAt: string; sizeBytes: number | null } | null;
  allowance: { plan: string; used: number; allowed: number };
}

/** A base backup of the platform's database server, or a restore point the owner marked in its application's database. */
export interface BackupView {
  id: string;
  kind: 'base' | 'restore_point';
  /** The owner's words for a restore point; null for base backups. */
  label: string | null;
  /** When it finished: the moment a restore to it goes back to. */
  at: string;
  /** A base backup's size (the whole server's); null for restore points. */
  sizeBytes: number | null;
  trigger: 'schedule' | 'operator' | 'owner';
}

export type RestoreStatus = 'queued' | 'running' | 'succeeded' | 'failed';

/** A restore of an application's database to a point in time, run by the launcher's backup service. */
export interface RestoreView {
  id: string;
  status: RestoreStatus;
  /** What it is doing, in words ("replaying the WAL"). */
  step: string | null;
  /** The moment restored to. */
  to: string;
  /** `new`: beside the live database as `databaseName`; `in_place`: swapped in, the replaced one kept as `keptDatabase`. */
  into: 'new' | 'in_place';
  databaseName: string | null;
  keptDatabase: string | null;
  sizeBytes: number | null;
  error: string | null;
  createdAt: string;
  finishedAt: string | null;
}

/** What an application's database can be restored to (`GET …/applications/:appId/database/backups`). */
export interface DatabaseBackupsView {
  /** Any moment from `earliest` to now; null before the platform's first base backup. */
  pointInTime: { earliest: string; latest: string } | null;
  /** The owner's plan's restore window (`restoreWindowDaysPerPlan`). */
  windowDays: number;
  /** Newest first. */
  backups: BackupView[];
  /** Newest first. */
  restores: RestoreView[];
  /** The platform's base backups: the last success, and a failure since then. */
  health: { lastBackupAt: string | null; failedAt: string | null };
}

export interface SignInServiceView {
  applicationId: string;
  baseUrl: string;
  jwksUrl: string;
  trustedOrigins: string[];
  settings: { emailAndPassword: boolean; requireEmailVerification: boolean; allowLocalhost: boolean; socialProviders: string[] };
  socialProviders: Record<string, { clientId: string; callbackUrl: string }>;
  /** The sign-in plugins (issue 33) and whether each is on; options beside `enabled`. */
  plugins: SignInPluginsView;
  /** Generic OpenID Connect providers by provider id (the client secret is never returned). */
  oidcProviders: Record<string, { issuer: string; clientId: string; callbackUrl: string }>;
  createdAt: string;
}

/** Each sign-in plugin's switch: off unless switched on. */
export interface SignInPluginsView {
  twoFactor: { enabled: boolean; issuer?: string };
  passkey: { enabled: boolean };
  magicLink: { enabled: boolean };
  emailOTP: { enabled: boolean };
  organization: { enabled: boolean; allowUserToCreateOrganization?: boolean };
  admin: { enabled: boolean };
}

/** The plugins' names, in the order the dashboard lists them. */
export const SIGN_IN_PLUGINS = ['twoFactor', 'passkey', 'magicLink', 'emailOTP', 'organization', 'admin'] as const;
export type SignInPluginName = (typeof SIGN_IN_PLUGINS)[number];

export interface SignInInfo {
  enabled: boolean;
  service: SignInServiceView | null;
}

export interface SignInUserView {
  id: string;
  email: string;
  name: string;
  emailVerified: boolean;
  createdAt: string;
  /** Better Auth's admin plugin: `user`, `admin` or a comma-separated list. */
  role: string;
  banned: boolean;
  banReason: string | null;
  /** null while banned: for ever. */
  banExpires: string | null;
}

export interface OutboxEmailView {
  id: string;
  kind: string;
  toAddress: string;
  subject: string;
  textBody: string;
  status: string;
  createdAt: string;
  sentAt: string | null;
}
