import type { PackageJson, PackageManagerRequest, ProjectSpec } from '@slipway/analyzer';
import { ToolchainError, type ManagerName, type ManagerToolchain, type NodeToolchain, type PackageManagers } from '@slipway/toolchains';
import { openProjectFile } from './project-file.js';
import { StepFailure } from './step-recorder.js';

/**
 * Each manager's download cache in its own directory of the application's cache (`/cache` in the
 * sandbox): npm's, pnpm's store, Yarn classic's, Yarn Berry's global folder, Bun's.
 * Yarn Berry installs with the node-modules linker (Plug'n'Play is not supported: the dependency
 * cache, pruning and the release all work on node_modules). pnpm's store only for pnpm (`manager`,
 * the manager the platform fetched): npm reads every `npm_config_*` and warns in the user's install
 * log about one it does not know ("Unknown env config "store-dir"").
 */
export function managerCacheEnv(cache: string, manager: ManagerName | null): Record<string, string> {
  return {
    npm_config_cache: `${cache}/npm`,
    ...(manager === 'pnpm' ? { npm_config_store_dir: `${cache}/pnpm-store` } : {}),
    YARN_CACHE_FOLDER: `${cache}/yarn`,
    YARN_GLOBAL_FOLDER: `${cache}/yarn-berry`,
    YARN_ENABLE_GLOBAL_CACHE: 'true',
    YARN_NODE_LINKER: 'node-modules',
    YARN_ENABLE_TELEMETRY: '0',
    YARN_ENABLE_PROGRESS_BARS: 'false',
    BUN_INSTALL_CACHE_DIR: `${cache}/bun`,
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  };
}

/** Dev tools a start script may run; with one of them (or any dev dependency) first, nothing is pruned. */
const DEV_RUNNERS = ['tsx', 'ts-node', 'vite', 'nodemon', 'serve', 'http-server'];

/**
 * The command that removes dev dependencies after the build, for a Node release; null (with why)
 * when nothing should be pruned. Run in the build sandbox, with the install's environment.
 */
export function pruneCommand(spec: ProjectSpec, pkg: PackageJson | null, request: PackageManagerRequest | null): { command: string | null; why: string } {
  if (spec.kind !== 'node' && spec.kind !== 'node+static') return { command: null, why: 'static release: node_modules is not shipped' };
  if (!spec.commands.install) return { command: null, why: 'nothing was installed' };
  if (spec.overrides.includes('installCommand')) return { command: null, why: `${'slipway.json'} sets installCommand: dev dependencies are kept` };
  const dev = Object.keys(pkg?.devDependencies ?? {});
  if (dev.length === 0) return { command: null, why: 'no dev dependencies' };
  const start = spec.startSource === 'script' ? (pkg?.scripts?.['start'] ?? '') : (spec.commands.start ?? '');
  const first =
    start
      .replace(/^(\s*[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*/, '')
      .trim()
      .split(/\s+/)[0] ?? '';
  const runner =
    first === 'npx' || first === 'pnpx' || first === 'bunx'
      ? (start
          .trim()
          .split(/\s+/)
          .find((word, i) => i > 0 && !word.startsWith('-')) ?? '')
      : first;
  if (dev.includes(runner) || DEV_RUNNERS.includes(runner))
    return { command: null, why: `the start command runs ${runner}, a dev tool: dev dependencies are kept` };
  const frozen = Boolean(spec.lockfile);
  switch (spec.packageManager) {
    case 'npm':
      return { command: 'npm prune --omit=dev', why: 'npm' };
    case 'pnpm':
      return { command: 'pnpm prune --prod', why: 'pnpm' };
    case 'yarn':
      return request?.yarnBerry
        ? { command: 'yarn workspaces focus --all --production', why: 'yarn berry' }
        : { command: `yarn install --production --ignore-engines${frozen ? ' --frozen-lockfile' : ''} --prefer-offline`, why: 'yarn classic' };
    case 'bun':
      // `bun install --production` over an installed tree keeps the dev dependencies: reinstalled from Bun's cache instead.
      return { command: `rm -rf node_modules && bun install --production${frozen ? ' --frozen-lockfile' : ''}`, why: 'bun' };
    default:
      return { command: null, why: 'no package manager' };
  }
}

/** package.json as the build left it (a link followed inside the project only, 1 MiB at most); undefined when it is not a regular file there. */
export async function readPackageJsonOf(src: string): Promise<{ path: string; bytes: number; text: string } | undefined> {
  const opened = await openProjectFile(src, 'package.json');
  if (!opened) return undefined;
  try {
    if (opened.size > 1024 * 1024) return undefined;
    return { path: 'package.json', bytes: opened.size, text: await opened.handle.readFile('utf8') };
  } finally {
    await opened.handle.close();
  }
}

/**
 * The project's package manager at the exact version (`spec.packageManagerVersion`), fetched and
 * verified once per machine; `package_manager_unavailable` before anything of the project ran.
 * Null: npm as the project's Node ships it.
 */
export async function managerFor(
  managers: PackageManagers,
  spec: ProjectSpec,
  request: PackageManagerRequest | null,
  node: NodeToolchain | null,
  log: (line: string) => void,
): Promise<ManagerToolchain | null> {
  if (!spec.packageManager || !request || !(spec.commands.install || spec.commands.build || spec.commands.start)) return null;
  try {
    const dist = await managers.resolve({
      manager: spec.packageManager as ManagerName,
      version: request.version,
      hash: request.hash,
      yarnBerry: request.yarnBerry,
      pnpmLockfileVersion: request.lockfileVersion,
    });
    if (!dist) {
      spec.packageManagerVersion = node?.npmVersion ?? null;
      return null;
    }
    const made = await managers.ensure(dist, request.hash, log);
    spec.packageManagerVersion = made.version;
    const berry = made.package === '@yarnpkg/cli-dist' ? ' (Berry, node-modules linker)' : '';
    log(
      `${made.manager} ${made.version}${berry} from ${made.package}${dist.source === 'packageManager' ? ' as packageManager pins it' : dist.source === 'lockfile' ? ` for ${spec.lockfile ?? 'the lockfile'}` : ''}${request.hash ? ', hash verified' : ''}`,
    );
    return made;
  } catch (error) {
    if (error instanceof ToolchainError) throw new StepFailure('package_manager_unavailable', error.message);
    throw error;
  }
}
