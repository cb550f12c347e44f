import { PUBLIC_PREFIXES, SENSITIVE_NAME, isPublicName, KNOWN_SECRET_PATTERNS } from './secret-patterns.js';
import type { Hazard, ProjectFile } from './types.js';

export interface SecretValue {
  name: string;
  value: string;
}

export interface OutputScanContext {
  /** The application's secrets (decrypted; never written anywhere by the analyzer). */
  secrets: SecretValue[];
  /** The sign-in service's cookie secret when sign-in is on. */
  cookieSecret?: string | null;
}

/** Values shorter than this are too likely to occur by chance to be searched for. */
const MIN_SECRET_LENGTH = 8;

function encodings(value: string): string[] {
  const forms = new Set([value, Buffer.from(value).toString('base64'), Buffer.from(value).toString('base64url'), encodeURIComponent(value)]);
  return [...forms].filter((form) => form.length >= MIN_SECRET_LENGTH);
}

export function isEnvFile(path: string): boolean {
  return /(^|\/)\.env($|\.)/.test(path);
}

export function isDotGit(path: string): boolean {
  return /(^|\/)\.git(\/|$)/.test(path);
}

/** Hazards in what will be served publicly (a static release, or a server's public assets). */
export function outputHazards(served: ProjectFile[], context: OutputScanContext): Hazard[] {
  const hazards: Hazard[] = [];
  const envFiles = served.filter((f) => isEnvFile(f.path));
  for (const file of envFiles) {
    hazards.push({
      code: 'env_file_served',
      severity: 'high',
      path: file.path,
      message: `${file.path} is in the files to be served. Slipway never serves .env files and leaves it out of the release, but remove it from the output: it usually holds credentials.`,
    });
  }
  const git = served.filter((f) => isDotGit(f.path));
  if (git.length > 0) {
    hazards.push({
      code: 'dotgit_served',
      severity: 'high',
      path: git[0]!.path.replace(/\.git\/.*$/, '.git'),
      detail: `${git.length} files`,
      message:
        'A .git directory is in the files to be served; it exposes the full history. Slipway never serves it and leaves it out of the release, but remove it from the output.',
    });
  }
  const maps = served.filter((f) => f.path.endsWith('.map'));
  if (maps.length > 0) {
    hazards.push({
      code: 'source_maps_served',
      severity: 'low',
      path: maps[0]!.path,
      detail: `${maps.length} files`,
      message: `${maps.length} source map${maps.length === 1 ? ' is' : 's are'} served publicly, which publishes the original source code. Turn off production source maps if that is not intended.`,
    });
  }
  const readable = served.filter((f) => f.text !== undefined && !isEnvFile(f.path) && !isDotGit(f.path));
  for (const secret of context.secrets) {
    // Public-prefixed variables are meant for the browser; a sensitive one is client_exposed_secret.
    if (secret.value.length < MIN_SECRET_LENGTH || isPublicName(secret.name)) continue;
    const forms = encodings(secret.value);
    const hit = readable.find((f) => forms.some((form) => f.text!.includes(form)));
    if (hit) {
      hazards.push({
        code: 'secret_in_output',
        severity: 'critical',
        path: hit.path,
        detail: secret.name,
        message: `The value of the secret ${secret.name} appears in ${hit.path}, which is served publicly. Rotate it and keep it out of client code.`,
      });
    }
  }
  for (const secret of context.secrets) {
    if (!isPublicName(secret.name)) continue;
    const bare = PUBLIC_PREFIXES.reduce((name, prefix) => (name.startsWith(prefix) ? name.slice(prefix.length) : name), secret.name);
    const looksSensitive = SENSITIVE_NAME.test(bare) || KNOWN_SECRET_PATTERNS.some(({ pattern }) => pattern.test(secret.value));
    if (looksSensitive) {
      hazards.push({
        code: 'client_exposed_secret',
        severity: 'high',
        detail: secret.name,
        message: `${secret.name} has a public prefix, so its value is built into code every visitor downloads, and it looks sensitive. Use a name without the public prefix and read it on a server.`,
      });
    }
  }
  if (context.cookieSecret && context.cookieSecret.length >= MIN_SECRET_LENGTH) {
    const forms = encodings(context.cookieSecret);
    const hit = readable.find((f) => forms.some((form) => f.text!.includes(form)));
    if (hit)
      hazards.push({
        code: 'client_exposed_secret',
        severity: 'critical',
        path: hit.path,
        detail: 'sign-in cookie secret',
        message: `The sign-in service's cookie secret appears in ${hit.path}, which is served to browsers. Anyone can forge sessions: rotate it.`,
      });
  }
  return hazards;
}

export function unsandboxedBuildHazard(reason: string): Hazard {
  return {
    code: 'unsandboxed_build',
    severity: 'medium',
    detail: reason,
    message: `Builds on this platform run without a sandbox (${reason}): install and build scripts, where a project has them, get the build worker's access to this machine.`,
  };
}

export function unboundedBuildDiskHazard(reason: string): Hazard {
  return {
    code: 'unbounded_build_disk',
    severity: 'medium',
    detail: reason,
    message: `Builds on this platform have no disk budget (${reason}): an install or build can fill the disk the platform's own data (Postgres, blobs) lives on, for every tenant.`,
  };
}

export function unsandboxedRuntimeHazard(reason: string): Hazard {
  return {
    code: 'unsandboxed_runtime',
    severity: 'high',
    detail: reason,
    message: `The application runs without the runtime sandbox (${reason}): its code has the edge's access to this machine, including other applications' secrets.`,
  };
}

export function rlimitOnlyBuildHazard(reason: string): Hazard {
  return {
    code: 'build_limits_rlimit_only',
    severity: 'medium',
    detail: reason,
    message: `Builds on this platform are not held in cgroups (${reason}): only per-user process-count and address-space rlimits bound them, so a build can still take the machine's memory and CPU from other tenants and the platform.`,
  };
}
