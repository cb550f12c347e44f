import { AnalyzeError, type PackageManager, type ProjectFile, type ProjectKind, type ProjectSpec } from './types.js';

interface PackageJson {
  name?: string;
  main?: string;
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  engines?: { node?: string };
  packageManager?: string;
}

const LOCKFILES: [string, PackageManager][] = [
  ['pnpm-lock.yaml', 'pnpm'],
  ['yarn.lock', 'yarn'],
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

function parsePackageJson(file: ProjectFile | undefined): PackageJson | null {
  if (!file) return null;
  try {
    const value: unknown = JSON.parse(file.text ?? '');
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not an object');
    return value as PackageJson;
  } catch (error) {
    throw new AnalyzeError('invalid_package_json', `package.json is not valid JSON: ${(error as Error).message}`);
  }
}

/** Variables the code reads: `process.env.X`, `process.env['X']`, `import.meta.env.X`. */
/** The server library for deployed apps (beta). */
const SIGN_IN_LIBRARY = '@slipway/auth-server';
const SIGN_IN_LITERAL = /["'`](?:SERVICE_AUTH_(?:BASE_URL|COOKIE_SECRET|JWKS_URL)|VITE_SERVICE_AUTH_URL|@slipway\/auth-server)["'`]/;

/**
 * Whether the project uses the sign-in service: it reads a sign-in variable (also through a
 * variable holding `process.env`, as the server library does), depends on or imports the server
 * library.
 */
function usesSignIn(files: ProjectFile[], env: string[], pkg: PackageJson | null): boolean {
  if (env.some((name) => name.startsWith('SERVICE_AUTH_') || name === 'VITE_SERVICE_AUTH_URL')) return true;
  if (pkg?.dependencies?.[SIGN_IN_LIBRARY]) return true;
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

function packageManagerOf(pkg: PackageJson, paths: Set<string>): Pick<ProjectSpec, 'packageManager' | 'packageManagerSource' | 'lockfile'> {
  const lockfile = LOCKFILES.find(([name]) => paths.has(name));
  const declared = /^(npm|pnpm|yarn)@/.exec(pkg.packageManager ?? '')?.[1] as PackageManager | undefined;
  if (declared) return { packageManager: declared, packageManagerSource: 'packageManager', lockfile: lockfile?.[0] ?? null };
  if (lockfile) return { packageManager: lockfile[1], packageManagerSource: 'lockfile', lockfile: lockfile[0] };
  return { packageManager: 'npm', packageManagerSource: 'default', lockfile: null };
}

function installCommand(manager: PackageManager, lockfile: string | null): string {
  switch (manager) {
    case 'npm':
      return lockfile ? 'npm ci' : 'npm install';
    case 'pnpm':
      return lockfile === 'pnpm-lock.yaml' ? 'pnpm install --frozen-lockfile' : 'pnpm install';
    case 'yarn':
      return lockfile === 'yarn.lock' ? 'yarn install --frozen-lockfile' : 'yarn install';
  }
}

function runScript(manager: PackageManager, script: string): string {
  return manager === 'npm' ? `npm run ${script}` : `${manager} run ${script}`;
}

/** Where a server's port comes from, judged from its code. */
function portHandling(files: ProjectFile[]): NonNullable<ProjectSpec['port']> {
  let fixed: number | null = null;
  for (const file of files) {
    if (!isSourceCode(file)) continue;
    if (/process\.env(\.PORT\b|\[\s*["'`]PORT["'`]\s*\])/.test(file.text!)) return { source: 'env', fixed: null };
    const literal = /\.listen\(\s*(\d{2,5})\b/.exec(file.text!) ?? /\bport\s*:\s*(\d{2,5})\b/.exec(file.text!);
    if (literal && fixed === null) fixed = Number(literal[1]);
  }
  return fixed === null ? { source: 'unknown', fixed: null } : { source: 'fixed', fixed };
}

/**
 * Detects what the project is and how to build and run it. Throws `AnalyzeError` for projects
 * Slipway cannot deploy.
 */
export function detectSpec(files: ProjectFile[]): ProjectSpec {
  const paths = new Set(files.map((f) => f.path));
  const pkg = parsePackageJson(files.find((f) => f.path === 'package.json'));
  const uploaded = files.filter((f) => !f.path.startsWith('node_modules/'));
  const base = {
    files: { count: files.length, bytes: files.reduce((sum, f) => sum + f.bytes, 0) },
    env: referencedEnv(files),
    usesSignIn: false,
  };
  base.usesSignIn = usesSignIn(files, base.env, pkg);

  if (!pkg) {
    if (!paths.has('index.html')) {
      const hint = uploaded.some((f) => /\.(py|rb|go|php|java|rs)$/.test(f.path) || ['requirements.txt', 'Gemfile', 'go.mod', 'Cargo.toml', 'composer.json'].includes(f.path))
        ? ' (only static sites and Node.js projects are supported)'
        : '';
      throw new AnalyzeError('unsupported_project', `no package.json and no index.html at the top level${hint}`);
    }
    return {
      kind: 'static', framework: null, packageManager: null, packageManagerSource: null, lockfile: null, nodeVersion: null,
      commands: { install: null, build: null, start: null }, outputDir: '.', spaFallback: false, port: null, ...base,
    };
  }

  const deps = { ...pkg.dependencies, ...pkg.devDependencies };
  const scripts = pkg.scripts ?? {};
  const manager = packageManagerOf(pkg, paths);
  const pm = manager.packageManager!;
  const frontend = FRONTEND_FRAMEWORKS.find(([dep]) => dep in deps);
  const serverFramework = SERVER_FRAMEWORKS.find((dep) => dep in (pkg.dependencies ?? {}));
  const mainEntry = pkg.main && paths.has(pkg.main) ? pkg.main : undefined;
  const inferredEntry = mainEntry ?? ENTRY_CANDIDATES.find((p) => paths.has(p) && (p !== 'index.js' || !paths.has('index.html')));
  const startsServer = Boolean(scripts['start']) && !/^(vite|serve|http-server|react-scripts start)\b/.test(scripts['start'] ?? '');
  // Without a start script, a server framework or an entry file with nothing to build or serve still means a server.
  const isServer = startsServer || Boolean(serverFramework) || (Boolean(inferredEntry) && !scripts['build'] && !paths.has('index.html'));
  const hasDeps = Object.keys(deps).length > 0;
  const commands = {
    install: hasDeps ? installCommand(pm, manager.lockfile) : null,
    build: scripts['build'] ? runScript(pm, 'build') : null,
    start: null as string | null,
  };

  if (isServer) {
    if (scripts['start']) commands.start = runScript(pm, 'start');
    else if (inferredEntry) commands.start = `node ${inferredEntry}`;
    else throw new AnalyzeError('no_start_script', 'this looks like a Node.js server but package.json has no "start" script and no entry file (server.js, index.js, "main") was found');
    const builtFrontEnd = Boolean(scripts['build'] && frontend);
    const kind: ProjectKind = builtFrontEnd ? 'node+static' : 'node';
    return {
      kind, framework: serverFramework ?? null, ...manager, nodeVersion: pkg.engines?.node ?? null, commands,
      outputDir: builtFrontEnd ? frontend![2] : null, spaFallback: false, port: portHandling(files), ...base,
    };
  }
  if (scripts['build']) {
    const outputDir = frontend?.[2] ?? (paths.has('public/index.html') ? 'public' : 'dist');
    // An index.html that boots an ES module is a client-rendered app (Vite-style) even without Vite.
    const spa = Boolean(frontend) || /<script[^>]*type=["']module["']/i.test(files.find((f) => f.path === 'index.html')?.text ?? '');
    return {
      kind: spa ? 'spa' : 'static', framework: frontend?.[1] ?? null, ...manager, nodeVersion: pkg.engines?.node ?? null, commands,
      outputDir, spaFallback: spa, port: null, ...base,
    };
  }
  if (paths.has('index.html')) {
    return {
      kind: 'static', framework: null, ...manager, nodeVersion: pkg.engines?.node ?? null, commands: { install: null, build: null, start: null },
      outputDir: '.', spaFallback: false, port: null, ...base,
    };
  }
  throw new AnalyzeError('unsupported_project', 'package.json has no "build" or "start" script, no server framework dependency and there is no index.html');
}

export type { PackageJson };
