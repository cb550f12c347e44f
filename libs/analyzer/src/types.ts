/** One file of a project or of a build output, as the analyzer sees it. */
export interface ProjectFile {
  /** Relative, `/`-separated. */
  path: string;
  bytes: number;
  /** UTF-8 text for small text files worth reading (source, config, served assets); absent otherwise. */
  text?: string;
}

/** A Node.js version or range as the project wrote it, and where. */
export interface NodeVersionRequest {
  value: string;
  source: 'engines' | '.nvmrc' | '.node-version';
}

export type ProjectKind = 'static' | 'spa' | 'node' | 'node+static';
export type PackageManager = 'npm' | 'pnpm' | 'yarn' | 'bun';

/** What the build worker needs to fetch the manager: `packageManager`'s pin (corepack) and lockfile facts. */
export interface PackageManagerRequest {
  /** Exact version from `packageManager` (`pnpm@9.15.0`), or null: chosen from the lockfile. */
  version: string | null;
  /** Corepack's hash suffix (`sha512.<hex>`), or null. */
  hash: string | null;
  /** Yarn 2+ (`__metadata` in yarn.lock, `.yarnrc.yml`, or `packageManager: yarn@2+`). */
  yarnBerry: boolean;
  /** pnpm-lock.yaml's `lockfileVersion`, or null. */
  lockfileVersion: string | null;
}

/** Where the start command came from. */
export type StartSource = 'script' | 'framework' | 'entry' | 'slipway.json';

/** What the deploy poll response shows as `spec`. */
export interface ProjectSpec {
  kind: ProjectKind;
  /** The recognised framework (`next`, `sveltekit`, `astro`, `nuxt`, `react-router`, `nestjs`, `vite`, `express`, …) or null. */
  framework: string | null;
  /** Its version: the lockfile's resolved version when the lockfile has it, else package.json's declared range. */
  frameworkVersion: string | null;
  frameworkVersionSource: 'lockfile' | 'package.json' | null;
  packageManager: PackageManager | null;
  /** Where the package manager choice came from. */
  packageManagerSource: 'packageManager' | 'lockfile' | 'default' | null;
  lockfile: string | null;
  /** The exact package-manager version install and build ran with (set by the build worker), or null. */
  packageManagerVersion?: string | null;
  /** The packed release (set by the build worker at the package step): compressed bytes and file count. */
  artifact?: { bytes: number; files: number } | null;
  /** What each install/build command used of the build limits (set by the build worker), in the order they ran. */
  buildResources?: BuildResourceUse[];
  /**
   * The exact Node.js version builds and the server run on (e.g. `22.23.3`), set by the build
   * worker once it has resolved `nodeVersionRequest`; null for a static site or before that.
   */
  nodeVersion: string | null;
  /** What the project declared (`.node-version`, `.nvmrc`, `engines.node`), or null (the platform's Node). */
  nodeVersionRequest?: NodeVersionRequest | null;
  commands: { install: string | null; build: string | null; start: string | null };
  /** Directory (relative to the project) whose files are served; null for a Node server without a front end. */
  outputDir: string | null;
  /** Directory the build must produce (checked after the build); defaults to `outputDir`. */
  buildOutput: string | null;
  /** Where `commands.start` came from (null when nothing is started). */
  startSource: StartSource | null;
  /** Why the analyzer decided so: which files and fields it read. */
  reasons: string[];
  /** `slipway.json` fields that replaced what was detected. */
  overrides: string[];
  /**
   * The directory of the application inside the upload (a monorepo's `apps/web`), when it is not
   * the top level: chosen by the deploy's `rootDirectory` field, `slipway.json` "rootDirectory",
   * or as the workspace's only deployable package. Every other path and command of the spec is
   * relative to the upload's top level (commands `cd` into it). Absent: the top level.
   */
  rootDirectory?: string;
  /** The monorepo the application is part of: how its packages are declared, its task runner, the deployable candidates. */
  workspace?: { declaredIn: string; tool: 'turbo' | 'nx' | null; candidates: string[]; builtFirst: string[] };
  /** Unknown paths fall back to `/index.html` (single-page app). */
  spaFallback: boolean;
  /** How a Node server learns its port: `env` (reads PORT), `fixed` (a literal), or null (static). */
  port: { source: 'env' | 'fixed' | 'unknown'; fixed: number | null } | null;
  files: { count: number; bytes: number };
  /** Variables the code references (`process.env.X`, `import.meta.env.X`), sorted. */
  env: string[];
  /** The code talks to the sign-in service (`SERVICE_AUTH_*`, `VITE_SERVICE_AUTH_URL`). */
  usesSignIn: boolean;
}

/** One sandboxed command's use of its build cgroup (null where the kernel does not say). */
export interface BuildResourceUse {
  step: string;
  command: string;
  peakMemoryBytes: number | null;
  memoryLimitBytes: number;
  cpuSeconds: number | null;
  peakTasks: number | null;
  tasksLimit: number;
  /** The limit the command ran into, if any (`memory`: the OOM killer stopped a process; `tasks`: a fork was refused). */
  limitHit: 'memory' | 'tasks' | null;
}

export type WarningCode =
  | 'no_lockfile'
  | 'node_modules_uploaded'
  | 'missing_secret'
  | 'engine_mismatch'
  | 'no_start_script'
  | 'port_not_from_env'
  | 'large_files'
  | 'sign_in_not_enabled'
  | 'build_output_warnings'
  | 'framework_adapter_replaced'
  | 'build_memory_near_limit'
  | 'node_end_of_life';

export type HazardCode =
  | 'secret_in_source'
  | 'secret_in_output'
  | 'client_exposed_secret'
  | 'env_file_served'
  | 'dotgit_served'
  | 'source_maps_served'
  | 'unsandboxed_build'
  | 'unbounded_build_disk'
  | 'unsandboxed_runtime'
  | 'build_limits_rlimit_only'
  // Added after the deploy succeeded, by the edge's watch of the release's first minute live (apps/edge/src/watch).
  | 'runtime_crashed'
  | 'runtime_5xx'
  | 'runtime_errors';

export type Severity = 'low' | 'medium' | 'high' | 'critical';

export interface Warning {
  code: WarningCode;
  message: string;
  path?: string;
  detail?: string;
}

export interface Hazard {
  code: HazardCode;
  severity: Severity;
  message: string;
  path?: string;
  detail?: string;
}

/** Why a project cannot be deployed (the deployment's `error.code` at the analyze step). */
export type AnalyzeFailureCode =
  | 'unsupported_project'
  | 'no_start_script'
  | 'invalid_package_json'
  | 'invalid_slipway_json'
  | 'package_manager_unavailable'
  | 'ambiguous_project'
  | 'root_directory_invalid';

export class AnalyzeError extends Error {
  override readonly name = 'AnalyzeError';
  constructor(
    readonly code: AnalyzeFailureCode,
    message: string,
  ) {
    super(message);
  }
}

/** What the platform knows about the application when analysing its source. */
export interface AnalyzeContext {
  /** Names of the application's secrets (values are not needed here). */
  secretNames: string[];
  signInEnabled: boolean;
  /** The deploy's `rootDirectory` form field (wins over slipway.json's). */
  rootDirectory?: string | null;
  /** Unused: the Node version is chosen per project since toolchains (see node-version.ts). */
  runtimeNodeVersion?: string;
}

export interface SourceAnalysis {
  spec: ProjectSpec;
  warnings: Warning[];
  hazards: Hazard[];
}
