import type { DeploymentStatus } from '../format.js';

export interface Owner {
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

export interface Credential {
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

export interface Step {
  name: string;
  status: 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped';
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  log: string;
}

/** A warning or hazard: `code` and `message` always; the rest is what the pipeline knew. */
export interface Finding {
  code: string;
  message: string;
  severity?: string;
  file?: string;
  path?: string;
  line?: number;
  hint?: string;
  [extra: string]: unknown;
}

export interface DeploymentTask {
  taskId: string;
  status: DeploymentStatus;
  steps: Step[];
  spec: Record<string, unknown> | null;
  warnings: Finding[];
  hazards: Finding[];
  url?: string;
  error?: { code: string; message: string; step: string | null };
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

export interface Release {
  id: string;
  deploymentId: string;
  kind: string;
  createdAt: string;
  live: boolean;
}

export interface Domain {
  id: string;
  hostname: string;
  createdAt: string;
  trustedOrigins: string[];
}

export interface DatabaseInfo {
  database: { name: string; createdAt: string; sizeBytes: number | null } | null;
  allowance: { plan: string; used: number; allowed: number };
}

export interface SignInServiceView {
  applicationId: string;
  baseUrl: string;
  jwksUrl: string;
  trustedOrigins: string[];
  settings: { emailAndPassword: boolean; requireEmailVerification: boolean; allowLocalhost: boolean; socialProviders: string[] };
  socialProviders: Record<string, { clientId: string; callbackUrl: string }>;
  createdAt: string;
}

export interface SignInInfo {
  enabled: boolean;
  service: SignInServiceView | null;
}

export interface SignInUser {
  id: string;
  email: string;
  name: string;
  emailVerified: boolean;
  createdAt: string;
}

export interface OutboxEmail {
  id: string;
  kind: string;
  toAddress: string;
  subject: string;
  textBody: string;
  status: string;
  createdAt: string;
  sentAt: string | null;
}
