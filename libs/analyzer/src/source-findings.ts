import { isSourceCode } from './detect-spec.js';
import { findSecrets } from './secret-patterns.js';
import type { AnalyzeContext, Hazard, ProjectFile, ProjectSpec, Warning } from './types.js';

/** Variables the platform itself provides to builds or servers: never "missing". */
export const PLATFORM_PROVIDED = ['PORT', 'NODE_ENV', 'HOST', 'HOSTNAME', 'DATABASE_URL', 'SLIPWAY_RELEASE_ID', 'SLIPWAY_APP_SLUG'];
const SIGN_IN_PROVIDED = /^(SERVICE_AUTH_[A-Z0-9_]+|VITE_SERVICE_AUTH_URL)$/;
/** One file above this size is flagged: it slows every deploy and every visitor who loads it. */
export const LARGE_FILE_BYTES = 5 * 1024 * 1024;

function uploadedFiles(files: ProjectFile[]): ProjectFile[] {
  return files.filter((f) => !f.path.startsWith('node_modules/'));
}

/** Warnings and hazards that can be judged from the uploaded source alone. */
export function sourceFindings(files: ProjectFile[], spec: ProjectSpec, context: AnalyzeContext): { warnings: Warning[]; hazards: Hazard[] } {
  const warnings: Warning[] = [];
  const hazards: Hazard[] = [];
  const pkg = files.find((f) => f.path === 'package.json');
  const hasDependencies = spec.commands.install !== null;

  if (pkg && hasDependencies && !spec.lockfile) {
    warnings.push({
      code: 'no_lockfile',
      path: 'package.json',
      message:
        "No lockfile was uploaded, so dependency versions are resolved afresh on every deploy and the dependency cache cannot be used. Commit your package manager's lockfile: package-lock.json (npm), pnpm-lock.yaml (pnpm), yarn.lock (Yarn classic or Berry), bun.lock or bun.lockb (Bun).",
    });
  }
  const modules = files.filter((f) => f.path.startsWith('node_modules/'));
  if (modules.length > 0) {
    warnings.push({
      code: 'node_modules_uploaded',
      path: 'node_modules',
      detail: `${modules.length} files`,
      message: 'node_modules was uploaded; it is ignored and dependencies are installed from the lockfile. Leave it out to make uploads smaller and faster.',
    });
  }
  const known = new Set([...context.secretNames, ...PLATFORM_PROVIDED]);
  for (const name of spec.env) {
    if (known.has(name)) continue;
    if (SIGN_IN_PROVIDED.test(name) && context.signInEnabled) continue;
    if (SIGN_IN_PROVIDED.test(name)) continue; // reported once below as sign_in_not_enabled
    warnings.push({
      code: 'missing_secret',
      detail: name,
      message: `The code reads ${name}, but the application has no secret with that name and the platform does not provide it, so it will be undefined.`,
    });
  }
  if (spec.usesSignIn && !context.signInEnabled) {
    warnings.push({
      code: 'sign_in_not_enabled',
      detail: spec.env.filter((n) => SIGN_IN_PROVIDED.test(n)).join(', '),
      message:
        'The code uses the sign-in service (SERVICE_AUTH_*), but sign-in is not enabled for this application, so those variables will be undefined. Enable sign-in first.',
    });
  }
  if ((spec.kind === 'node' || spec.kind === 'node+static') && spec.commands.start && spec.startSource === 'entry') {
    warnings.push({
      code: 'no_start_script',
      path: 'package.json',
      detail: spec.commands.start,
      message: `package.json has no "start" script; the server is started with \`${spec.commands.start}\`. Add a start script to say how it should run.`,
    });
  }
  if (spec.port && spec.port.source !== 'env') {
    warnings.push({
      code: 'port_not_from_env',
      detail: spec.port.fixed === null ? undefined : String(spec.port.fixed),
      message:
        spec.port.fixed === null
          ? 'The server code never reads process.env.PORT. The platform routes to the one port it is found listening on when it starts; a server listening on two ports, or on none by then, receives no traffic. Listen on the port the platform assigns in PORT.'
          : `The server listens on the fixed port ${spec.port.fixed} instead of process.env.PORT. The platform routes to it while it is the only port the server listens on; listen on the port the platform assigns in PORT instead.`,
    });
  }
  for (const file of uploadedFiles(files)) {
    if (file.bytes > LARGE_FILE_BYTES) {
      warnings.push({
        code: 'large_files',
        path: file.path,
        detail: `${file.bytes} bytes`,
        message: `${file.path} is ${(file.bytes / 1024 / 1024).toFixed(1)} MB; large files slow down deploys and page loads.`,
      });
    }
  }
  for (const file of uploadedFiles(files)) {
    if (file.text === undefined || /(^|\/)(package-lock\.json|pnpm-lock\.yaml|yarn\.lock)$/.test(file.path)) continue;
    if (!isSourceCode(file) && !/(^|\/)\.env|\.(json|ya?ml|toml|ini|conf)$/.test(file.path)) continue;
    for (const match of findSecrets(file.text)) {
      hazards.push({
        code: 'secret_in_source',
        severity: 'high',
        path: file.path,
        detail: `${match.kind}, line ${match.line}`,
        message: `${file.path} line ${match.line} contains what looks like a credential (${match.kind}). Move it to a secret and rotate it: the source is stored with the deployment.`,
      });
    }
  }
  return { warnings, hazards };
}
