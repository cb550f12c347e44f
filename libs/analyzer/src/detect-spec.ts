import { GENERIC_FRAMEWORKS, RECOGNISERS, portReadingCommand, runScript, unplacedFramework, type FrameworkInput, type FrameworkPlan } from './frameworks.js';
import { filesByPackage, filesUnder, internalDependencies, normaliseRootDirectory, readWorkspace, type Workspace } from './workspaces.js';
import { OVERRIDE_FILE, lockedVersion, parseOverrides, parsePackageJson, type PackageJson, type SlipwayOverrides } from './project-facts.js';
import { AnalyzeError, type PackageManager, type PackageManagerRequest, type ProjectFile, type ProjectKind, type ProjectSpec, type Warning } from './types.js';

/** Lockfiles in the order they are looked for when `packageManager` does not decide. */
export const LOCKFILES: [string, PackageManager][] = [
  ['pnpm-lock.yaml', 'pnpm'],
  ['yarn.lock', 'yarn'],
  ['bun.lock', 'bun'],
  ['bun.lockb', 'bun'],
  ['package-lock.json', 'npm'],
  ['npm-shrinkwrap.json', 'npm'],
];
const SERVER_FRAMEWORKS = ['express', 'fastify', 'koa', 'hono', '@hono/node-server', '@nestjs/core', 'h3', 'polka'];
const FRONTEND_FRAMEWORKS: [string, string, string][] = [
  // dependency, framework name, default output directory
  ['vite', 'vite', 'dist'],
  ['react-scripts', 'create-react-app', 'build'],
  ['parcel', 'parcel', 'dist'],
];
const ENTRY_CANDIDATES = ['server.js', 'server.mjs', 'index.js', 'index.mjs', 'app.js', 'main.js', 'src/server.js', 'src/index.js'];
const CODE_FILE = /\.(m?[jt]sx?|cjs|cts|mts|vue|svelte|astro|html?)$/;

export function isSourceCode(file: ProjectFile): boolean {
  return file.text !== undefined && CODE_FILE.test(file.path) && !file.path.startsWith('node_modules/') && !/(^|\/)(dist|build)\//.test(file.path);
}

/** Variables the code reads: `process.env.X`, `process.env['X']`, `import.meta.env.X`. */
/** The sign-in SDK for deployed Node apps (beta); a project still on its beta name uses sign-in all the same. */
const SIGN_IN_LIBRARIES = ['@slipway/sign-in-sdk', '@slipway/auth-server' /* renamed from (beta) on 2026-11-28 */];
const SIGN_IN_LITERAL = /["'`](?:SERVICE_AUTH_(?:BASE_URL|COOKIE_SECRET|JWKS_URL)|VITE_SERVICE_AUTH_URL|@slipway\/(?:sign-in-sdk|auth-server))["'`]/;

/**
 * Whether the project uses the sign-in service: it reads a sign-in variable (also through a
 * variable holding `process.env`, as the sign-in SDK does), depends on or imports the sign-in
 * SDK.
 */
function usesSignIn(files: ProjectFile[], env: string[], pkg: PackageJson | null): boolean {
  if (env.some((name) => name.startsWith('SERVICE_AUTH_') || name === 'VITE_SERVICE_AUTH_URL')) return true;
  if (SIGN_IN_LIBRARIES.some((name) => pkg?.dependencies?.[name])) return true;
  return files.some((f) => isSourceCode(f) && SIGN_IN_LITERAL.test(f.text!));
}

export function referencedEnv(files: ProjectFile[]): string[] {
  const names = new Set<string>();
  const patterns = [/process\.env\.([A-Z_][A-Z0-9_]*)/g, /process\.env\[\s*["'`]([A-Z_][A-Z0-9_]*)["'`]\s*\]/g, /import\.meta\.env\.([A-Z_][A-Z0-9_]*)/g];
  for (const file of files) {
    if (!isSourceCode(file)) continue;
    for (const pattern of patterns) for (const match of file.text!.matchAll(pattern)) names.add(match[1]!);
  }
  for (const builtIn of ['MODE', 'DEV', 'PROD', 'SSR', 'BASE_URL']) names.delete(builtIn);
  return [...names].sort();
}

const PACKAGE_MANAGER_FIELD = /^(npm|pnpm|yarn|bun)@([^+\s]+)(?:\+(\S+))?$/;

/** The manager from `packageManager` (corepack: `<name>@<exact version>[+<hash>]`), else the lockfile, else npm. */
/** Kept beside each detected manager (not in the spec): what the build worker needs to fetch it. */
const REQUESTS = new WeakMap<Manager, PackageManagerRequest>();

/** What the build worker fetches for a project: `packageManager`'s pin and the lockfile facts (null: no package.json). */
export function packageManagerRequest(files: ProjectFile[]): PackageManagerRequest | null {
  const pkg = parsePackageJson(files.find((f) => f.path === 'package.json'));
  return pkg ? (REQUESTS.get(packageManagerOf(pkg, new Set(files.map((f) => f.path)), files)) ?? null) : null;
}

function packageManagerOf(pkg: PackageJson, paths: Set<string>, files: ProjectFile[]): Manager {
  const field = typeof pkg.packageManager === 'string' ? pkg.packageManager.trim() : '';
  const pinned = field ? PACKAGE_MANAGER_FIELD.exec(field) : null;
  if (field && !pinned) {
    throw new AnalyzeError(
      'package_manager_unavailable',
      `package.json "packageManager" is "${field.slice(0, 100)}"; supported: npm, pnpm, yarn or bun as <name>@<exact version>[+sha512.<hex>] (corepack's format)`,
    );
  }
  const declared = pinned?.[1] as PackageManager | undefined;
  // With `packageManager`, only that manager's own lockfile counts (another one is stale).
  const lockfile = LOCKFILES.find(([name, pm]) => paths.has(name) && (!declared || pm === declared));
  const manager = declared ?? lockfile?.[1] ?? 'npm';
  const yarnLock = files.find((f) => f.path === 'yarn.lock')?.text;
  const major = pinned ? Number.parseInt(pinned[2]!, 10) : NaN;
  const request: PackageManagerRequest = {
    version: pinned?.[2] ?? null,
    hash: pinned?.[3] ?? null,
    yarnBerry:
      manager === 'yarn' && (Number.isFinite(major) ? major >= 2 : /(^|\n)__metadata:/.test(yarnLock ?? '') || (!yarnLock && paths.has('.yarnrc.yml'))),
    lockfileVersion:
      manager === 'pnpm' ? (/(?:^|\n)lockfileVersion: ['"]?([0-9.]+)/.exec(files.find((f) => f.path === 'pnpm-lock.yaml')?.text ?? '')?.[1] ?? null) : null,
  };
  const facts: Manager = {
    packageManager: manager,
    packageManagerSource: declared ? 'packageManager' : lockfile ? 'lockfile' : 'default',
    lockfile: lockfile?.[0] ?? null,
  };
  REQUESTS.set(facts, request);
  return facts;
}

/** Frozen when the manager's lockfile is there: the install must not change what was locked. */
export function installCommand(manager: PackageManager, lockfile: string | null, request?: PackageManagerRequest | null): string {
  switch (manager) {
    case 'npm':
      return lockfile ? 'npm ci' : 'npm install';
    case 'pnpm':
      return lockfile ? 'pnpm install --frozen-lockfile' : 'pnpm install';
    case 'yarn':
      if (request?.yarnBerry) return lockfile ? 'yarn install --immutable' : 'yarn install';
      return lockfile ? 'yarn install --frozen-lockfile' : 'yarn install';
    case 'bun':
      return lockfile ? 'bun install --frozen-lockfile' : 'bun install';
  }
}

/** `process.env.PORT`, `process.env['PORT']`, `const { PORT } = process.env`. */
const READS_PORT = /process\.env(\.PORT\b|\[\s*["'`]PORT["'`]\s*\])|\{[^{}]*\bPORT\b[^{}]*\}\s*=\s*process\.env\b/;

/** Where a server's port comes from, judged from its code. */
function portHandling(files: ProjectFile[]): NonNullable<ProjectSpec['port']> {
  let fixed: number | null = null;
  for (const file of files) {
    if (!isSourceCode(file)) continue;
    if (READS_PORT.test(file.text!)) return { source: 'env', fixed: null };
    const literal = /\.listen\(\s*(\d{2,5})\b/.exec(file.text!) ?? /\bport\s*:\s*(\d{2,5})\b/.exec(file.text!);
    if (literal && fixed === null) fixed = Number(literal[1]);
  }
  return fixed === null ? { source: 'unknown', fixed: null } : { source: 'fixed', fixed };
}

type Base = Pick<ProjectSpec, 'files' | 'env' | 'usesSignIn'>;
type Manager = Pick<ProjectSpec, 'packageManager' | 'packageManagerSource' | 'lockfile'>;
const VITE_UI: [string, string][] = [
  ['react', 'React'],
  ['vue', 'Vue'],
  ['svelte', 'Svelte'],
  ['preact', 'Preact'],
  ['solid-js', 'Solid'],
  ['lit', 'Lit'],
];
const OTHER_LANGUAGES: [RegExp, string][] = [
  [/^(requirements\.txt|pyproject\.toml|Pipfile|.*\.py)$/, 'Python'],
  [/^(Gemfile|.*\.rb)$/, 'Ruby'],
  [/^(go\.mod|.*\.go)$/, 'Go'],
  [/^(composer\.json|.*\.php)$/, 'PHP'],
  [/^(pom\.xml|build\.gradle|.*\.java)$/, 'Java'],
  [/^(Cargo\.toml|.*\.rs)$/, 'Rust'],
];

/** Why nothing could be placed: what was found, where the analyzer looked, what to change. */
function unsupported(uploaded: ProjectFile[], found: string): AnalyzeError {
  const languages = [
    ...new Set(OTHER_LANGUAGES.filter(([re]) => uploaded.some((f) => re.test(f.path.slice(f.path.lastIndexOf('/') + 1)))).map(([, name]) => name)),
  ];
  const nested = uploaded.filter((f) => /^[^/]+\/(package\.json|index\.html)$/.test(f.path) && !f.path.startsWith('node_modules/')).map((f) => f.path);
  const hints = [
    languages.length ? `this looks like a ${languages.join('/')} project (only static sites and Node.js projects are supported)` : null,
    nested.length ? `found ${nested.slice(0, 3).join(', ')} one folder down: deploy that folder instead` : null,
    `to deploy anyway, add ${OVERRIDE_FILE} with "buildCommand", "startCommand" and/or "outputDirectory"`,
  ].filter(Boolean);
  const advice = hints.join('; ');
  return new AnalyzeError(
    'unsupported_project',
    `${found}. Looked at the top level for package.json (scripts, dependencies, framework config files) and index.html. ${advice.charAt(0).toUpperCase()}${advice.slice(1)}.`,
  );
}

function versionOf(
  name: string,
  pkg: PackageJson,
  files: ProjectFile[],
  lockfile: string | null,
): Pick<ProjectSpec, 'frameworkVersion' | 'frameworkVersionSource'> {
  const locked = lockedVersion(
    files.find((f) => f.path === lockfile),
    name,
  );
  if (locked) return { frameworkVersion: locked, frameworkVersionSource: 'lockfile' };
  const declared = pkg.dependencies?.[name] ?? pkg.devDependencies?.[name];
  return declared ? { frameworkVersion: declared, frameworkVersionSource: 'package.json' } : { frameworkVersion: null, frameworkVersionSource: null };
}

function staticSpec(base: Base, manager: Manager, nodeVersion: string | null, reasons: string[]): ProjectSpec {
  return {
    kind: 'static',
    framework: null,
    frameworkVersion: null,
    frameworkVersionSource: null,
    ...manager,
    nodeVersion,
    commands: { install: null, build: null, start: null },
    outputDir: '.',
    buildOutput: null,
    startSource: null,
    reasons,
    overrides: [],
    spaFallback: false,
    port: null,
    ...base,
  };
}

/** The generic rules: a server (start script, server library or entry file), a built front end, or files served as they are. */
function genericSpec(files: ProjectFile[], pkg: PackageJson, paths: Set<string>, base: Base, manager: Manager, uploaded: ProjectFile[]): ProjectSpec {
  const deps = { ...pkg.dependencies, ...pkg.devDependencies };
  const scripts = pkg.scripts ?? {};
  const pm = manager.packageManager!;
  const nodeVersion = pkg.engines?.node ?? null;
  const frontend = FRONTEND_FRAMEWORKS.find(([dep]) => dep in deps);
  const serverFramework = SERVER_FRAMEWORKS.find((dep) => dep in (pkg.dependencies ?? {}));
  const mainEntry = pkg.main && paths.has(pkg.main) ? pkg.main : undefined;
  const inferredEntry = mainEntry ?? ENTRY_CANDIDATES.find((p) => paths.has(p) && (p !== 'index.js' || !paths.has('index.html')));
  const startsServer = Boolean(scripts['start']) && !/^(vite|serve|http-server|react-scripts start)\b/.test(scripts['start'] ?? '');
  // Without a start script, a server framework or an entry file with nothing to build or serve still means a server.
  const isServer = startsServer || Boolean(serverFramework) || (Boolean(inferredEntry) && !scripts['build'] && !paths.has('index.html'));
  const hasDeps = Object.keys(deps).length > 0;
  const commands = {
    install: hasDeps ? installCommand(pm, manager.lockfile, REQUESTS.get(manager)) : null,
    build: scripts['build'] ? runScript(pm, 'build') : null,
    start: null as string | null,
  };
  const reasons: string[] = [];
  if (scripts['build']) reasons.push(`package.json scripts.build: ${scripts['build']}`);
  const named = serverFramework ?? frontend?.[0];
  const version = named ? versionOf(named, pkg, files, manager.lockfile) : { frameworkVersion: null, frameworkVersionSource: null };

  if (isServer) {
    let startSource: ProjectSpec['startSource'] = 'script';
    if (scripts['start']) {
      commands.start = runScript(pm, 'start');
      reasons.push(`package.json scripts.start: ${scripts['start']}`);
    } else if (inferredEntry) {
      commands.start = `node ${inferredEntry}`;
      startSource = 'entry';
      reasons.push(`no start script: entry file ${inferredEntry}${mainEntry ? ' (package.json "main")' : ''}`);
    } else {
      throw new AnalyzeError(
        'no_start_script',
        `this looks like a Node.js server (${serverFramework ? `it depends on ${serverFramework}` : 'package.json'}) but package.json has no "start" script and no entry file (server.js, index.js, "main") was found; add a "start" script, or "startCommand" in ${OVERRIDE_FILE}`,
      );
    }
    if (serverFramework) reasons.push(`package.json depends on ${serverFramework} ${pkg.dependencies![serverFramework]}`);
    const builtFrontEnd = Boolean(scripts['build'] && frontend);
    if (builtFrontEnd) reasons.push(`${frontend![0]} front end built to ${frontend![2]}/`);
    const kind: ProjectKind = builtFrontEnd ? 'node+static' : 'node';
    const tool = startSource === 'script' ? portReadingCommand(scripts['start']) : null;
    const port: NonNullable<ProjectSpec['port']> = tool ? { source: 'env', fixed: null } : portHandling(files);
    reasons.push(
      tool
        ? `the start script runs ${tool}, which reads PORT`
        : port.source === 'env'
          ? 'the code reads process.env.PORT'
          : port.source === 'fixed'
            ? `the code listens on the fixed port ${port.fixed}`
            : 'the code never reads process.env.PORT',
    );
    return {
      kind,
      framework: serverFramework ?? null,
      ...(serverFramework ? version : { frameworkVersion: null, frameworkVersionSource: null }),
      ...manager,
      nodeVersion,
      commands,
      outputDir: builtFrontEnd ? frontend![2] : null,
      buildOutput: builtFrontEnd ? frontend![2] : null,
      startSource,
      reasons,
      overrides: [],
      spaFallback: false,
      port,
      ...base,
    };
  }
  if (scripts['build']) {
    const outputDir = frontend?.[2] ?? (paths.has('public/index.html') ? 'public' : 'dist');
    // An index.html that boots an ES module is a client-rendered app (Vite-style) even without Vite.
    const moduleScript = /<script[^>]*type=["']module["']/i.test(files.find((f) => f.path === 'index.html')?.text ?? '');
    const spa = Boolean(frontend) || moduleScript;
    if (frontend) {
      const ui = VITE_UI.filter(([dep]) => dep in deps).map(([, name]) => name);
      reasons.push(
        `package.json depends on ${frontend[0]} ${deps[frontend[0]]}${ui.length ? ` with ${ui.join(', ')}` : ''}: single-page app built to ${outputDir}/`,
      );
    } else reasons.push(moduleScript ? `index.html boots an ES module: single-page app built to ${outputDir}/` : `static files built to ${outputDir}/`);
    return {
      kind: spa ? 'spa' : 'static',
      framework: frontend?.[1] ?? null,
      ...version,
      ...manager,
      nodeVersion,
      commands,
      outputDir,
      buildOutput: outputDir,
      startSource: null,
      reasons,
      overrides: [],
      spaFallback: spa,
      port: null,
      ...base,
    };
  }
  if (paths.has('index.html')) return staticSpec(base, manager, nodeVersion, ['index.html at the top level, no build script: files served as they are']);
  throw unsupported(uploaded, 'package.json has no "build" or "start" script, no recognised framework or server dependency, and there is no index.html');
}

function planSpec(plan: FrameworkPlan, pkg: PackageJson, files: ProjectFile[], base: Base, manager: Manager): ProjectSpec {
  const deps = { ...pkg.dependencies, ...pkg.devDependencies };
  const install = Object.keys(deps).length > 0 ? installCommand(manager.packageManager!, manager.lockfile, REQUESTS.get(manager)) : null;
  const port: ProjectSpec['port'] =
    plan.kind === 'node' || plan.kind === 'node+static' ? (plan.readsPort ? { source: 'env', fixed: null } : portHandling(files)) : null;
  return {
    kind: plan.kind,
    framework: plan.framework,
    ...versionOf(plan.dependency, pkg, files, manager.lockfile),
    ...manager,
    nodeVersion: pkg.engines?.node ?? null,
    commands: { install: install && plan.installExtra ? `${install} && ${plan.installExtra}` : install, build: plan.build, start: plan.start },
    outputDir: plan.outputDir,
    buildOutput: plan.buildOutput,
    startSource: plan.startSource,
    reasons: plan.reasons,
    overrides: [],
    spaFallback: plan.spaFallback,
    port,
    ...base,
  };
}

/** `slipway.json` wins over detection, field by field; each use is listed in `overrides` and `reasons`. */
function applyOverrides(spec: ProjectSpec, overrides: SlipwayOverrides, files: ProjectFile[]): ProjectSpec {
  const out: ProjectSpec = { ...spec, commands: { ...spec.commands }, reasons: [...spec.reasons], overrides: [] };
  const note = (field: string, value: string) => {
    out.overrides.push(field);
    out.reasons.push(`${OVERRIDE_FILE} ${field}: ${value}`);
  };
  if (overrides.framework) {
    note('framework', overrides.framework);
    out.framework = overrides.framework;
  }
  if (overrides.installCommand) {
    note('installCommand', overrides.installCommand);
    out.commands.install = overrides.installCommand;
  }
  if (overrides.buildCommand) {
    note('buildCommand', overrides.buildCommand);
    out.commands.build = overrides.buildCommand;
  }
  if (overrides.outputDirectory) {
    note('outputDirectory', overrides.outputDirectory);
    out.outputDir = overrides.outputDirectory;
    out.buildOutput = overrides.outputDirectory === '.' ? null : overrides.outputDirectory;
  }
  if (overrides.startCommand) {
    note('startCommand', overrides.startCommand);
    out.commands.start = overrides.startCommand;
    out.startSource = 'slipway.json';
    if (out.kind !== 'node' && out.kind !== 'node+static') {
      out.kind = out.outputDir && out.outputDir !== '.' && out.commands.build ? 'node+static' : 'node';
      out.spaFallback = false;
      if (out.outputDir === '.') out.outputDir = null;
    }
    if (portReadingCommand(overrides.startCommand)) out.port = { source: 'env', fixed: null };
    else if (!out.port || out.port.source !== 'env') out.port = portHandling(files);
  }
  return out;
}

/** How the top level of a monorepo reaches detection of one of its packages. */
interface Within {
  /** The workspace root's package manager and lockfile (the package has neither of its own). */
  manager: Manager;
  /** slipway.json's fields when the package has no slipway.json of its own (rootDirectory dropped). */
  overrides: SlipwayOverrides;
}

export interface DetectOptions {
  /** The deploy's `rootDirectory` field (wins over slipway.json's). */
  rootDirectory?: string | null;
}

/**
 * Detects what the project is and how to build and run it, and the warnings that come with the
 * decision. Throws `AnalyzeError` for projects Slipway cannot deploy.
 *
 * A monorepo (npm, pnpm, Yarn or Bun workspaces) deploys one of its packages: the one named by
 * the deploy's `rootDirectory` field or slipway.json's "rootDirectory", else the only deployable
 * one, else the deploy fails with `ambiguous_project` listing them. A `rootDirectory` outside a
 * workspace is a project in a sub-folder (installed there).
 */
export function detectProject(files: ProjectFile[], options: DetectOptions = {}): { spec: ProjectSpec; warnings: Warning[] } {
  const rootOverrides = parseOverrides(files.find((f) => f.path === OVERRIDE_FILE));
  const fromField = options.rootDirectory ? normaliseRootDirectory(options.rootDirectory, "the deploy's rootDirectory field") : null;
  const fromFile = rootOverrides.rootDirectory ? normaliseRootDirectory(rootOverrides.rootDirectory, `${OVERRIDE_FILE} "rootDirectory"`) : null;
  const workspace = readWorkspace(files);
  const inherited = withoutRootDirectory(rootOverrides);
  const rootPkg = parsePackageJson(files.find((f) => f.path === 'package.json'));
  // Only a workspace's packages borrow the top level's manager; a single project reads its own in detectAt.
  const paths = new Set(files.map((f) => f.path));
  const rootManager = workspace && rootPkg ? packageManagerOf(rootPkg, paths, files) : null;
  const within = (dir: string): Within | undefined =>
    workspace && rootManager ? { manager: rootManager, overrides: paths.has(`${dir}/${OVERRIDE_FILE}`) ? {} : inherited } : undefined;
  const candidates = workspace ? deployablePackages(files, workspace, within) : [];
  const chosen = fromField
    ? {
        dir: fromField,
        why: `the deploy's rootDirectory field: ${fromField}${fromFile && fromFile !== fromField ? ` (over ${OVERRIDE_FILE} "rootDirectory": ${fromFile})` : ''}`,
      }
    : fromFile
      ? { dir: fromFile, why: `${OVERRIDE_FILE} "rootDirectory": ${fromFile}` }
      : null;
  if (!chosen) {
    if (!workspace || candidates.length === 0)
      return detectHere(
        files,
        undefined,
        workspace && candidates.length === 0
          ? [`${workspace.declaredIn} declares workspaces, but none of its packages is an application: the top level is deployed`]
          : [],
      );
    if (candidates.length > 1) {
      throw new AnalyzeError(
        'ambiguous_project',
        `this is a monorepo (${workspace.declaredIn}${workspace.tool ? `, ${workspace.tool === 'turbo' ? 'Turborepo' : 'Nx'}` : ''}) with ${candidates.length} applications: ${candidates.join(', ')}. Choose one: add "rootDirectory": "${candidates[0]}" to ${OVERRIDE_FILE} at the top level (or send the deploy's rootDirectory field, \`slipway deploy --root-directory ${candidates[0]}\`)`,
      );
    }
  }
  const dir = chosen?.dir ?? candidates[0]!;
  const why = chosen?.why ?? `the only application of the workspace (${workspace!.declaredIn}): ${dir}`;
  const sub = filesUnder(files, dir);
  if (!sub.some((f) => f.path === 'package.json' || f.path === 'index.html')) {
    const found = files.some((f) => f.path.startsWith(`${dir}/`));
    const listed = candidates.length ? `; the workspace's applications: ${candidates.join(', ')}` : '';
    throw new AnalyzeError(
      'root_directory_invalid',
      `rootDirectory "${dir}" (${chosen ? why.split(':')[0] : 'chosen'}) ${found ? 'holds no package.json or index.html' : 'is not a directory of the upload'}${listed}`,
    );
  }
  const inside = workspace?.packages.some((p) => p.dir === dir) ? within(dir) : undefined;
  const detected = detectHere(sub, inside, []);
  return {
    spec: relocate(detected.spec, dir, why, inside ? { workspace: workspace!, manager: inside.manager } : null, candidates),
    warnings: detected.warnings.map((w) => (w.path ? { ...w, path: `${dir}/${w.path}` } : w)),
  };
}

/**
 * The workspace's packages that are applications: a recognised framework, a start script, a
 * server library, or a build with a front end (vite) or an index.html. Libraries (a `build: tsc`,
 * shared configs) are not.
 */
function deployablePackages(files: ProjectFile[], workspace: Workspace, within: (dir: string) => Within | undefined): string[] {
  const byPackage = filesByPackage(
    files,
    workspace.packages.map((p) => p.dir),
  );
  return workspace.packages
    .filter(({ dir, pkg }) => {
      const scripts = pkg.scripts ?? {};
      const deps = { ...pkg.dependencies, ...pkg.devDependencies };
      const sub = byPackage.get(dir) ?? [];
      const input: FrameworkInput = {
        files: sub,
        paths: new Set(sub.map((f) => f.path)),
        pkg,
        deps,
        scripts,
        pm: within(dir)?.manager.packageManager ?? 'npm',
      };
      if (RECOGNISERS.some(([, recognise]) => recognise(input) !== null)) return true;
      if (scripts['start'] || SERVER_FRAMEWORKS.some((d) => d in (pkg.dependencies ?? {}))) return true;
      return Boolean(scripts['build']) && (FRONTEND_FRAMEWORKS.some(([d]) => d in deps) || input.paths.has('index.html'));
    })
    .map((p) => p.dir);
}

/** `dir`'s spec made relative to the upload's top level: commands `cd` into it, directories under it, the workspace's own packages built first. */
function relocate(spec: ProjectSpec, dir: string, why: string, root: { workspace: Workspace; manager: Manager } | null, candidates: string[]): ProjectSpec {
  const workspace = root?.workspace ?? null;
  const under = (path: string | null) => (path === null ? null : path === '.' ? dir : `${dir}/${path}`);
  const cd = (command: string | null) => (command ? `cd ${dir} && ${command}` : null);
  const pm = spec.packageManager ?? 'npm';
  let install = spec.commands.install;
  let build = spec.commands.build;
  const builtFirst: string[] = [];
  if (workspace) {
    // Installed once at the top level (the workspace's lockfile links its packages); what follows a framework's `&&` (an adapter) runs in the package.
    const base = installCommand(pm, spec.lockfile, REQUESTS.get(root!.manager));
    const atRoot = spec.overrides.includes('installCommand') ? null : install;
    install = atRoot === null ? cd(install) : atRoot.startsWith(`${base} && `) ? `${base} && cd ${dir} && ${atRoot.slice(base.length + 4)}` : atRoot;
    if (!install && spec.lockfile) install = base;
    // The packages it depends on that have a build of their own, dependencies first (as turbo's `dependsOn: ["^build"]`).
    for (const dep of internalDependencies(workspace, dir).filter((p) => p.pkg.scripts?.['build'])) builtFirst.push(dep.dir);
    // Package folders come from the upload: quoted for the shell unless plainly safe (the build is the tenant's own, in its sandbox, either way).
    const first = builtFirst.map((d) => `(cd ${shellWord(d)} && ${runScript(pm, 'build')})`);
    build = [...first, cd(build)].filter(Boolean).join(' && ') || null;
  } else {
    install = cd(install);
    build = cd(build);
  }
  const reasons = [
    `${why}`,
    ...(workspace
      ? [
          `workspace: ${workspace.declaredIn} (${workspace.patterns.join(', ')})${workspace.tool ? `, ${workspace.tool === 'turbo' ? 'Turborepo (turbo.json)' : 'Nx (nx.json)'}` : ''}; installed at the top level with ${spec.lockfile ?? 'no lockfile'}${builtFirst.length ? `; built first: ${builtFirst.join(', ')}` : ''}`,
        ]
      : []),
    ...spec.reasons,
  ];
  return {
    ...spec,
    commands: { install, build, start: cd(spec.commands.start) },
    outputDir: under(spec.outputDir),
    buildOutput: under(spec.buildOutput),
    // A workspace's lockfile is the top level's; a sub-folder project's is its own.
    lockfile: workspace ? spec.lockfile : under(spec.lockfile),
    rootDirectory: dir,
    ...(workspace ? { workspace: { declaredIn: workspace.declaredIn, tool: workspace.tool, candidates, builtFirst } } : {}),
    reasons,
  };
}

function shellWord(text: string): string {
  return /^[A-Za-z0-9._@+/-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

function withoutRootDirectory(overrides: SlipwayOverrides): SlipwayOverrides {
  const out = { ...overrides };
  delete out.rootDirectory;
  return out;
}

/** Detection of one project at the top level of `files` (an upload, or a package of a monorepo with `within` its root's facts). */
function detectHere(files: ProjectFile[], within: Within | undefined, notes: string[]): { spec: ProjectSpec; warnings: Warning[] } {
  const result = detectAt(files, within);
  if (notes.length) result.spec.reasons.unshift(...notes);
  return result;
}

function detectAt(files: ProjectFile[], within: Within | undefined): { spec: ProjectSpec; warnings: Warning[] } {
  const paths = new Set(files.map((f) => f.path));
  const pkg = parsePackageJson(files.find((f) => f.path === 'package.json'));
  const own = parseOverrides(files.find((f) => f.path === OVERRIDE_FILE));
  const overrides = withoutRootDirectory(within && Object.keys(own).length === 0 ? within.overrides : own);
  const uploaded = files.filter((f) => !f.path.startsWith('node_modules/'));
  const base: Base = {
    files: { count: files.length, bytes: files.reduce((sum, f) => sum + f.bytes, 0) },
    env: referencedEnv(files),
    usesSignIn: false,
  };
  base.usesSignIn = usesSignIn(files, base.env, pkg);
  const hasOverrides = Object.keys(overrides).length > 0;

  if (!pkg) {
    const none: Manager = { packageManager: null, packageManagerSource: null, lockfile: null };
    if (paths.has('index.html'))
      return {
        spec: applyOverrides(staticSpec(base, none, null, ['no package.json; index.html at the top level: files served as they are']), overrides, files),
        warnings: [],
      };
    if (hasOverrides && (overrides.startCommand || overrides.outputDirectory))
      return { spec: applyOverrides(staticSpec(base, none, null, ['no package.json and no index.html']), overrides, files), warnings: [] };
    throw unsupported(uploaded, 'no package.json and no index.html at the top level');
  }

  const manager = within?.manager ?? packageManagerOf(pkg, paths, files);
  const input: FrameworkInput = {
    files,
    paths,
    pkg,
    deps: { ...pkg.dependencies, ...pkg.devDependencies },
    scripts: pkg.scripts ?? {},
    pm: manager.packageManager!,
  };
  let plan: FrameworkPlan | null = null;
  const forced = overrides.framework;
  if (forced && !GENERIC_FRAMEWORKS.includes(forced) && !RECOGNISERS.some(([id]) => id === forced)) {
    throw new AnalyzeError(
      'invalid_slipway_json',
      `${OVERRIDE_FILE} "framework" is "${forced}"; known: ${[...RECOGNISERS.map(([id]) => id), ...GENERIC_FRAMEWORKS].join(', ')}`,
    );
  }
  for (const [id, recognise] of RECOGNISERS) {
    if (forced && forced !== id) continue;
    plan = recognise(input);
    if (plan) break;
    if (forced)
      throw new AnalyzeError(
        'invalid_slipway_json',
        `${OVERRIDE_FILE} says "framework": "${forced}", but the project does not look like one (${unplacedFramework(input) ?? 'its package is not in package.json or its config is missing'})`,
      );
  }
  if (forced === 'static') {
    const spec = staticSpec(base, manager, pkg.engines?.node ?? null, ['served as static files']);
    if (pkg.scripts?.['build']) spec.commands.build = runScript(manager.packageManager!, 'build');
    if (Object.keys(input.deps).length > 0) spec.commands.install = installCommand(manager.packageManager!, manager.lockfile, REQUESTS.get(manager));
    return { spec: applyOverrides(spec, overrides, files), warnings: [] };
  }
  if (plan) return { spec: applyOverrides(planSpec(plan, pkg, files, base, manager), overrides, files), warnings: plan.warnings ?? [] };
  const unplaced = forced === 'node' ? null : unplacedFramework(input);
  if (unplaced && !hasOverrides) throw unsupported(uploaded, `found ${unplaced}`);
  try {
    return { spec: applyOverrides(genericSpec(files, pkg, paths, base, manager, uploaded), overrides, files), warnings: [] };
  } catch (error) {
    // Nothing detected, but the author said how to build and run it.
    if (!(error instanceof AnalyzeError) || !(overrides.startCommand || overrides.outputDirectory)) throw error;
    const fallback = staticSpec(base, manager, pkg.engines?.node ?? null, [`nothing recognised (${error.message.split('.')[0]})`]);
    fallback.commands.install = Object.keys(input.deps).length > 0 ? installCommand(manager.packageManager!, manager.lockfile, REQUESTS.get(manager)) : null;
    return { spec: applyOverrides(fallback, overrides, files), warnings: [] };
  }
}

export function detectSpec(files: ProjectFile[], options: DetectOptions = {}): ProjectSpec {
  return detectProject(files, options).spec;
}

export type { PackageJson };
