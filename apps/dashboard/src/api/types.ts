import type { DeployFinding, DeploymentTask as ContractDeploymentTask } from '@slipway/contract';
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

export type Step = DeploymentTask['steps'][number];

/** A warning or hazard: `code` and `message` always; the rest is what the pipeline knew. */
export interface Finding extends DeployFinding {
  file?: string;
  line?: number;
  hint?: string;
}

export type DeploymentTask = ContractDeploymentTask<Finding>;

export interface Release {
  id: string;
  deploymentId: string;
  kind: string;
  createdAt: string;
  live: boolean;
}

/** A claim of a custom domain: served and trusted only once its TXT record is verified. */
export interface Domain {
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
