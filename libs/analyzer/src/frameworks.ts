import type { PackageJson } from './project-facts.js';
import type { PackageManager, ProjectFile, ProjectKind, StartSource, Warning } from './types.js';

/** What the analyzer knows about the project while recognising its framework. */
export interface FrameworkInput {
  files: ProjectFile[];
  paths: Set<string>;
  pkg: PackageJson;
  deps: Record<string, string>;
  scripts: Record<string, string>;
  pm: PackageManager;
}

/** How a recognised framework is built, where its output lands and how it is started. */
export interface FrameworkPlan {
  framework: string;
  /** The package whose version is reported as the framework's version. */
  dependency: string;
  kind: ProjectKind;
  build: string | null;
  start: string | null;
  startSource: StartSource | null;
  /** Public files (scanned for hazards; served as is for static kinds). */
  outputDir: string | null;
  /** What the build must produce. */
  buildOutput: string | null;
  spaFallback: boolean;
  /** The framework's server reads PORT itself: the app's own code need not. */
  readsPort: boolean;
  reasons: string[];
  /** Appended to the install command (a package the build needs). */
  installExtra?: string;
  warnings?: Warning[];
}

type Recogniser = (input: FrameworkInput) => FrameworkPlan | null;

/**
 * Commands that take their port from PORT themselves (checked in each tool's source or docs):
 * `next start`, `react-router-serve`, `remix-serve`, `fastify start` (fastify-cli: FASTIFY_PORT or
 * PORT), `nuxt start`/`nuxi preview` (Nitro's server), `sirv` (sirv-cli). A start script running
 * one of them needs no `process.env.PORT` in the project's own code.
 */
const PORT_READING_COMMANDS: [RegExp, string][] = [
  [/^next start\b/, 'next start'],
  [/^react-router-serve\b/, 'react-router-serve'],
  [/^remix-serve\b/, 'remix-serve'],
  [/^fastify start\b/, 'fastify start (fastify-cli)'],
  [/^(nuxt|nuxi) (start|preview)\b/, 'nuxt start'],
  [/^sirv\b/, 'sirv'],
  [/^node \.?\/?\.output\/server\/index\.mjs\b/, "Nitro's server (.output/server/index.mjs)"],
  [/^vinxi start\b/, 'vinxi start (Nitro)'],
  [/^(node_modules\/\.bin\/)?srvx\b/, 'srvx'],
];

/** The PORT-reading tool a start script runs (after `VAR=value`, `cross-env`, `npx`), or null. */
export function portReadingCommand(script: string | undefined): string | null {
  const command = (script ?? '')
    .trim()
    .replace(/^(?:(?:cross-env\s+)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)+)/, '')
    .replace(/^npx\s+(--no-install\s+)?/, '');
  return PORT_READING_COMMANDS.find(([pattern]) => pattern.test(command))?.[1] ?? null;
}

export function runScript(pm: PackageManager, script: string): string {
  return `${pm} run ${script}`;
}

function config(input: FrameworkInput, names: string[]): ProjectFile | undefined {
  for (const name of names) {
    const file = input.files.find((f) => f.path === name);
    if (file) return file;
  }
  return undefined;
}

/** Comments removed, so a commented-out option does not count. */
function code(file: ProjectFile | undefined): string {
  return (file?.text ?? '').replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/[^\n]*/g, '$1');
}

function hasDir(input: FrameworkInput, dir: string): boolean {
  return input.files.some((f) => f.path.startsWith(`${dir}/`));
}

/** The build: the project's own `build` script when it has one, else the framework's command through npx. */
function buildWith(input: FrameworkInput, fallback: string, reasons: string[]): string {
  if (input.scripts['build']) {
    reasons.push(`package.json scripts.build: ${input.scripts['build']}`);
    return runScript(input.pm, 'build');
  }
  reasons.push(`no build script: runs ${fallback}`);
  return `npx --no-install ${fallback}`;
}

const next: Recogniser = (input) => {
  if (!input.deps['next']) return null;
  const reasons = [`package.json depends on next ${input.deps['next']}`];
  const routers = [
    hasDir(input, 'app') || hasDir(input, 'src/app') ? 'app' : null,
    hasDir(input, 'pages') || hasDir(input, 'src/pages') ? 'pages' : null,
  ].filter(Boolean);
  if (routers.length > 0) reasons.push(`${routers.join(' and ')} router (${routers.map((r) => `${r}/`).join(', ')})`);
  const file = config(input, ['next.config.ts', 'next.config.mjs', 'next.config.js', 'next.config.cjs', 'next.config.mts']);
  const text = code(file);
  let build = buildWith(input, 'next build', reasons);
  if (/\boutput\s*:\s*["'`]export["'`]/.test(text)) {
    reasons.push(`${file!.path}: output 'export' (static export to out/)`);
    return {
      framework: 'next',
      dependency: 'next',
      kind: 'static',
      build,
      start: null,
      startSource: null,
      outputDir: 'out',
      buildOutput: 'out',
      spaFallback: false,
      readsPort: false,
      reasons,
    };
  }
  if (/\boutput\s*:\s*["'`]standalone["'`]/.test(text)) {
    reasons.push(`${file!.path}: output 'standalone': .next/static and public/ are copied next to .next/standalone/server.js, as Next.js documents`);
    build += ' && cp -r .next/static .next/standalone/.next/';
    if (hasDir(input, 'public')) build += ' && cp -r public .next/standalone/';
    return {
      framework: 'next',
      dependency: 'next',
      kind: 'node',
      build,
      start: 'node .next/standalone/server.js',
      startSource: 'framework',
      outputDir: '.next/static',
      buildOutput: '.next/standalone',
      spaFallback: false,
      readsPort: true,
      reasons,
    };
  }
  const start = input.scripts['start'];
  if (start && !/^next start\b/.test(start)) {
    reasons.push(`package.json scripts.start runs its own server: ${start}`);
    return {
      framework: 'next',
      dependency: 'next',
      kind: 'node',
      build,
      start: runScript(input.pm, 'start'),
      startSource: 'script',
      outputDir: '.next/static',
      buildOutput: '.next',
      spaFallback: false,
      readsPort: false,
      reasons,
    };
  }
  reasons.push(start ? `package.json scripts.start: ${start} (reads PORT)` : 'no start script: next start (reads PORT)');
  return {
    framework: 'next',
    dependency: 'next',
    kind: 'node',
    build,
    start: start ? runScript(input.pm, 'start') : 'npx --no-install next start',
    startSource: start ? 'script' : 'framework',
    outputDir: '.next/static',
    buildOutput: '.next',
    spaFallback: false,
    readsPort: true,
    reasons,
  };
};

const ADAPTER_NODE_INSTALL: Record<PackageManager, string> = {
  npm: 'npm install --no-save',
  pnpm: 'pnpm add -D',
  yarn: 'yarn add -D',
  bun: 'bun add -d',
};
/** adapter-node's major for each SvelteKit major (its peer range): the newest adapter may need a newer kit. */
const ADAPTER_NODE_FOR_KIT: Record<string, string> = { '1': '^1', '2': '^5', '3': '^6' };

function adapterNodeSpec(kitRange: string): string {
  const major = /(\d+)/.exec(kitRange)?.[1];
  const range = major ? ADAPTER_NODE_FOR_KIT[major] : undefined;
  return range ? `@sveltejs/adapter-node@${range}` : '@sveltejs/adapter-node';
}

const sveltekit: Recogniser = (input) => {
  if (!input.deps['@sveltejs/kit']) return null;
  const reasons = [`package.json depends on @sveltejs/kit ${input.deps['@sveltejs/kit']}`];
  const file = config(input, ['svelte.config.js', 'svelte.config.mjs', 'svelte.config.ts']);
  const text = code(file);
  const adapter = /from\s+["'](@sveltejs\/adapter-[a-z-]+)["']/.exec(text)?.[1] ?? Object.keys(input.deps).find((d) => d.startsWith('@sveltejs/adapter-'));
  reasons.push(adapter ? `${file ? file.path : 'package.json'}: ${adapter}` : 'no adapter found in svelte.config.js or package.json');
  const build = buildWith(input, 'vite build', reasons);
  if (adapter === '@sveltejs/adapter-static') {
    const pages = /\bpages\s*:\s*["'`]([^"'`]+)["'`]/.exec(text)?.[1]?.replace(/^\.\//, '').replace(/\/+$/, '') ?? 'build';
    const fallback = /\bfallback\s*:\s*["'`]([^"'`]+)["'`]/.exec(text)?.[1];
    reasons.push(`adapter-static writes pages to ${pages}/${fallback ? ` with fallback ${fallback}` : ''}`);
    return {
      framework: 'sveltekit',
      dependency: '@sveltejs/kit',
      kind: 'static',
      build,
      start: null,
      startSource: null,
      outputDir: pages,
      buildOutput: pages,
      spaFallback: fallback === 'index.html',
      readsPort: false,
      reasons,
    };
  }
  const plan: FrameworkPlan = {
    framework: 'sveltekit',
    dependency: '@sveltejs/kit',
    kind: 'node',
    build,
    start: 'node build',
    startSource: 'framework',
    outputDir: 'build/client',
    buildOutput: 'build',
    spaFallback: false,
    readsPort: true,
    reasons,
  };
  if (adapter === '@sveltejs/adapter-node') {
    reasons.push('adapter-node: Node server in build/, started with node build (reads PORT)');
    return plan;
  }
  if (adapter === '@sveltejs/adapter-auto' || adapter === undefined) {
    const configPath = file?.path ?? 'svelte.config.js';
    reasons.push(`${adapter ?? 'no adapter'} cannot detect this platform: built with @sveltejs/adapter-node instead`);
    plan.installExtra = `${ADAPTER_NODE_INSTALL[input.pm]} ${adapterNodeSpec(input.deps['@sveltejs/kit'])}`;
    if (file && adapter) plan.build = `sed -i 's#@sveltejs/adapter-auto#@sveltejs/adapter-node#' ${configPath} && ${build}`;
    plan.warnings = [
      {
        code: 'framework_adapter_replaced',
        path: configPath,
        detail: `${adapter ?? 'none'} -> @sveltejs/adapter-node`,
        message: `${configPath} uses ${adapter ?? 'no adapter'}, which cannot detect this platform, so Slipway builds the app with @sveltejs/adapter-node (${adapterNodeSpec(input.deps['@sveltejs/kit'])}, installed for the build and swapped into the build's copy of ${configPath} only). To make it explicit: install @sveltejs/adapter-node as a devDependency and import adapter from '@sveltejs/adapter-node' in ${configPath}.`,
      },
    ];
    return plan;
  }
  return null; // another platform's adapter: the caller reports what it found
};

const astro: Recogniser = (input) => {
  if (!input.deps['astro']) return null;
  const reasons = [`package.json depends on astro ${input.deps['astro']}`];
  const file = config(input, ['astro.config.mjs', 'astro.config.ts', 'astro.config.js', 'astro.config.mts', 'astro.config.cjs']);
  const text = code(file);
  const build = buildWith(input, 'astro build', reasons);
  if (/from\s+["']@astrojs\/node["']/.test(text)) {
    if (/\bmode\s*:\s*["'`]middleware["'`]/.test(text)) {
      if (!input.scripts['start']) return null;
      reasons.push(`${file!.path}: @astrojs/node in middleware mode, started by scripts.start: ${input.scripts['start']}`);
      return {
        framework: 'astro',
        dependency: 'astro',
        kind: 'node',
        build,
        start: runScript(input.pm, 'start'),
        startSource: 'script',
        outputDir: 'dist/client',
        buildOutput: 'dist',
        spaFallback: false,
        readsPort: false,
        reasons,
      };
    }
    reasons.push(`${file!.path}: @astrojs/node standalone: node ./dist/server/entry.mjs (reads PORT)`);
    return {
      framework: 'astro',
      dependency: 'astro',
      kind: 'node',
      build,
      start: 'node ./dist/server/entry.mjs',
      startSource: 'framework',
      outputDir: 'dist/client',
      buildOutput: 'dist',
      spaFallback: false,
      readsPort: true,
      reasons,
    };
  }
  const adapter = /from\s+["'](@astrojs\/(?:vercel|netlify|cloudflare)[^"']*)["']/.exec(text)?.[1];
  if (adapter) return null;
  reasons.push(`${file ? `${file.path}: no server adapter` : 'no astro.config'}: static site in dist/`);
  return {
    framework: 'astro',
    dependency: 'astro',
    kind: 'static',
    build,
    start: null,
    startSource: null,
    outputDir: 'dist',
    buildOutput: 'dist',
    spaFallback: false,
    readsPort: false,
    reasons,
  };
};

const nuxt: Recogniser = (input) => {
  if (!input.deps['nuxt']) return null;
  const reasons = [`package.json depends on nuxt ${input.deps['nuxt']}`];
  const file = config(input, ['nuxt.config.ts', 'nuxt.config.js', 'nuxt.config.mjs']);
  const text = code(file);
  const spa = /\bssr\s*:\s*false\b/.test(text);
  const generates = /\bnuxt(i)? generate\b/.test(input.scripts['build'] ?? '') || (spa && Boolean(input.scripts['generate']));
  if (generates || /\bpreset\s*:\s*["'`]static["'`]/.test(text)) {
    const script = /\bnuxt(i)? generate\b/.test(input.scripts['build'] ?? '') || !input.scripts['generate'] ? 'build' : 'generate';
    reasons.push(spa ? `${file!.path}: ssr: false (single-page app)` : 'prerendered with nuxt generate');
    reasons.push(`package.json scripts.${script}: ${input.scripts[script] ?? '-'}: static files in .output/public`);
    return {
      framework: 'nuxt',
      dependency: 'nuxt',
      kind: spa ? 'spa' : 'static',
      build: input.scripts[script] ? runScript(input.pm, script) : 'npx --no-install nuxt generate',
      start: null,
      startSource: null,
      outputDir: '.output/public',
      buildOutput: '.output/public',
      spaFallback: spa,
      readsPort: false,
      reasons,
    };
  }
  const build = buildWith(input, 'nuxt build', reasons);
  reasons.push('Nitro node server: node .output/server/index.mjs (reads PORT)');
  return {
    framework: 'nuxt',
    dependency: 'nuxt',
    kind: 'node',
    build,
    start: 'node .output/server/index.mjs',
    startSource: 'framework',
    outputDir: '.output/public',
    buildOutput: '.output',
    spaFallback: false,
    readsPort: true,
    reasons,
  };
};

const reactRouter: Recogniser = (input) => {
  const file = config(input, ['react-router.config.ts', 'react-router.config.js', 'react-router.config.mjs']);
  if (!input.deps['@react-router/dev'] && !file) return null;
  const reasons = [
    input.deps['@react-router/dev']
      ? `package.json depends on @react-router/dev ${input.deps['@react-router/dev']} (framework mode)`
      : `${file!.path} (framework mode)`,
  ];
  const build = buildWith(input, 'react-router build', reasons);
  if (/\bssr\s*:\s*false\b/.test(code(file))) {
    reasons.push(`${file!.path}: ssr: false (SPA mode): static files in build/client`);
    return {
      framework: 'react-router',
      dependency: 'react-router',
      kind: 'spa',
      build,
      start: null,
      startSource: null,
      outputDir: 'build/client',
      buildOutput: 'build/client',
      spaFallback: true,
      readsPort: false,
      reasons,
    };
  }
  const start = input.scripts['start'];
  const serves = !start || portReadingCommand(start) !== null;
  reasons.push(
    start ? `package.json scripts.start: ${start}${serves ? ' (reads PORT)' : ''}` : 'no start script: react-router-serve ./build/server/index.js (reads PORT)',
  );
  return {
    framework: 'react-router',
    dependency: 'react-router',
    kind: 'node',
    build,
    start: start ? runScript(input.pm, 'start') : 'npx --no-install react-router-serve ./build/server/index.js',
    startSource: start ? 'script' : 'framework',
    outputDir: 'build/client',
    buildOutput: 'build',
    spaFallback: false,
    readsPort: serves,
    reasons,
  };
};

const nest: Recogniser = (input) => {
  if (!input.deps['@nestjs/core'] || !/\bnest build\b/.test(input.scripts['build'] ?? '')) return null;
  const reasons = [
    `package.json depends on @nestjs/core ${input.deps['@nestjs/core']}`,
    `package.json scripts.build: ${input.scripts['build']} (compiles to dist/)`,
  ];
  const prod = input.scripts['start:prod'];
  const custom = prod && prod.trim() !== 'node dist/main';
  reasons.push(custom ? `package.json scripts.start:prod: ${prod}` : 'started with node dist/main (scripts.start runs nest start, which recompiles)');
  return {
    framework: 'nestjs',
    dependency: '@nestjs/core',
    kind: 'node',
    build: runScript(input.pm, 'build'),
    start: custom ? runScript(input.pm, 'start:prod') : 'node dist/main',
    startSource: custom ? 'script' : 'framework',
    outputDir: null,
    buildOutput: 'dist',
    spaFallback: false,
    readsPort: false,
    reasons,
  };
};

/** Frameworks whose production build is a Nitro server in `.output/` (dependency, name). */
const NITRO_FRAMEWORKS: [string, string][] = [
  ['@tanstack/react-start', 'tanstack-start'],
  ['@tanstack/solid-start', 'tanstack-start'],
  ['@solidjs/start', 'solid-start'],
  ['@analogjs/platform', 'analog'],
  ['nitro', 'nitro'],
  ['nitropack', 'nitro'],
];

/**
 * TanStack Start, SolidStart, Analog and Nitro itself: built by the project's `build` script into
 * Nitro's `.output/` (a Node server in `.output/server/index.mjs` that reads PORT, and the public
 * files in `.output/public`), started with `node .output/server/index.mjs` unless scripts.start
 * says otherwise.
 */
const nitroBased: Recogniser = (input) => {
  const found = NITRO_FRAMEWORKS.find(([dep]) => input.deps[dep]);
  if (!found) return null;
  const [dependency, framework] = found;
  const reasons = [`package.json depends on ${dependency} ${input.deps[dependency]}`];
  const build = buildWith(input, 'vite build', reasons);
  const start = input.scripts['start'];
  if (framework === 'tanstack-start' && !start && !/\bnitro\b/.test(code(config(input, VITE_CONFIGS))))
    return tanstackWithoutNitro(input, dependency, build, reasons);
  const own = start && !/^(vite|vinxi dev|vite dev)\b/.test(start.trim()) ? start : null;
  if (own) {
    const reads = portReadingCommand(own) !== null;
    reasons.push(`package.json scripts.start: ${own}${reads ? ' (reads PORT)' : ''}`);
    return {
      framework,
      dependency,
      kind: 'node',
      build,
      start: runScript(input.pm, 'start'),
      startSource: 'script',
      outputDir: '.output/public',
      buildOutput: '.output',
      spaFallback: false,
      readsPort: reads,
      reasons,
    };
  }
  reasons.push(
    `${start ? `scripts.start runs a dev server (${start}); ` : 'no start script: '}Nitro's node server: node .output/server/index.mjs (reads PORT)`,
  );
  return {
    framework,
    dependency,
    kind: 'node',
    build,
    start: 'node .output/server/index.mjs',
    startSource: 'framework',
    outputDir: '.output/public',
    buildOutput: '.output',
    spaFallback: false,
    readsPort: true,
    reasons,
  };
};

const VITE_CONFIGS = ['vite.config.ts', 'vite.config.mts', 'vite.config.js', 'vite.config.mjs'];
/** srvx's runtime install when the lockfile did not already hoist it (npm does: it is a dependency of TanStack Start's plugin). */
const SRVX_INSTALL: Record<PackageManager, string> = {
  npm: 'npm install --no-save srvx@^1',
  pnpm: 'pnpm add srvx@^1',
  yarn: 'yarn add srvx@^1',
  bun: 'bun add srvx@^1',
};

/**
 * TanStack Start without Nitro (its starter today): `vite build` writes `dist/client` and
 * `dist/server/server.js`, a fetch handler that does not listen. TanStack documents serving it on
 * Node with srvx (unjs), which reads PORT: `srvx serve --prod -s ../client dist/server/server.js`
 * (the static folder is relative to the entry's). With npm's lockfile srvx is already installed
 * (hoisted from TanStack Start's own dependencies); otherwise it is added for the release.
 */
function tanstackWithoutNitro(input: FrameworkInput, dependency: string, build: string, reasons: string[]): FrameworkPlan {
  const lockfile = input.files.find((f) => f.path === 'package-lock.json')?.text ?? '';
  const hoisted = input.pm === 'npm' && lockfile.includes('"node_modules/srvx"');
  reasons.push(
    `vite.config: no Nitro plugin: dist/server/server.js is a fetch handler, served with srvx (reads PORT)${hoisted ? ', installed with TanStack Start (package-lock.json)' : `, added for the release (${SRVX_INSTALL[input.pm]})`}`,
  );
  return {
    framework: 'tanstack-start',
    dependency,
    kind: 'node',
    build,
    start: 'node_modules/.bin/srvx serve --prod -s ../client dist/server/server.js',
    startSource: 'framework',
    outputDir: 'dist/client',
    buildOutput: 'dist/server',
    spaFallback: false,
    readsPort: true,
    reasons,
    ...(hoisted ? {} : { installExtra: SRVX_INSTALL[input.pm] }),
  };
}

interface AngularBuildTarget {
  builder?: string;
  options?: {
    outputPath?: string | { base?: string; browser?: string; server?: string };
    ssr?: unknown;
    server?: string;
    outputMode?: string;
    prerender?: unknown;
  };
}
interface AngularProject {
  projectType?: string;
  architect?: { build?: AngularBuildTarget };
  targets?: { build?: AngularBuildTarget };
}

interface AngularWorkspace {
  projects?: Record<string, AngularProject>;
  defaultProject?: string;
}

function angularWorkspace(file: ProjectFile | undefined): AngularWorkspace | null {
  try {
    const value: unknown = file?.text ? JSON.parse(file.text) : null;
    return value && typeof value === 'object' ? (value as AngularWorkspace) : null;
  } catch {
    return null;
  }
}

/**
 * Angular (`@angular/core` and `angular.json`): the application's build target in angular.json
 * says where the build writes (`outputPath`, `dist/<project>` by default) and whether it has a
 * server (`ssr` / `outputMode: 'server'`). With one: `node dist/<project>/server/server.mjs`
 * (Angular's own Express server, which reads PORT), the browser files beside it; without: an SPA
 * in `dist/<project>/browser`. `ng serve` (scripts.start) is a dev server and never runs here.
 */
const angular: Recogniser = (input) => {
  if (!input.deps['@angular/core']) return null;
  const file = input.files.find((f) => f.path === 'angular.json');
  const workspace = angularWorkspace(file);
  const projects = Object.entries(workspace?.projects ?? {}).filter(([, p]) => p && p.projectType !== 'library');
  const chosen = projects.find(([name]) => name === workspace?.defaultProject) ?? projects[0];
  if (!chosen) return null;
  const [name, project] = chosen;
  const target = project.architect?.build ?? project.targets?.build;
  const options = target?.options ?? {};
  const reasons = [
    `package.json depends on @angular/core ${input.deps['@angular/core']}`,
    `angular.json: application "${name}"${projects.length > 1 ? ` (the ${workspace?.defaultProject === name ? 'default' : 'first'} of ${projects.length})` : ''}, builder ${target?.builder ?? 'unknown'}`,
  ];
  const outputPath = options.outputPath;
  const base = (typeof outputPath === 'string' ? outputPath : (outputPath?.base ?? `dist/${name}`)).replace(/^\.\//, '').replace(/\/+$/, '');
  // The application builder writes browser/ and server/ below outputPath; the old browser builder writes the files at outputPath.
  const applicationBuilder = !target?.builder || /:application$/.test(target.builder);
  const browserDir = applicationBuilder ? `${base}/${(typeof outputPath === 'object' ? outputPath.browser : undefined) ?? 'browser'}`.replace(/\/$/, '') : base;
  const build = buildWith(input, 'ng build', reasons);
  const server = applicationBuilder && Boolean(options.ssr) && options.outputMode !== 'static';
  if (server) {
    const serverDir = `${base}/${(typeof outputPath === 'object' ? outputPath.server : undefined) ?? 'server'}`;
    reasons.push(
      `angular.json: ssr with ${options.outputMode ? `outputMode '${options.outputMode}'` : 'a server entry'}: node ${serverDir}/server.mjs (reads PORT), browser files in ${browserDir}/`,
    );
    return {
      framework: 'angular',
      dependency: '@angular/core',
      kind: 'node',
      build,
      start: `node ${serverDir}/server.mjs`,
      startSource: 'framework',
      outputDir: browserDir,
      buildOutput: base,
      spaFallback: false,
      readsPort: true,
      reasons,
    };
  }
  reasons.push(`angular.json: no server (ssr${options.outputMode === 'static' ? ` with outputMode 'static'` : ' not set'}): single-page app in ${browserDir}/`);
  return {
    framework: 'angular',
    dependency: '@angular/core',
    kind: 'spa',
    build,
    start: null,
    startSource: null,
    outputDir: browserDir,
    buildOutput: browserDir,
    spaFallback: true,
    readsPort: false,
    reasons,
  };
};

/** In order: meta-frameworks before the libraries they are built on. */
export const RECOGNISERS: [string, Recogniser][] = [
  ['next', next],
  ['sveltekit', sveltekit],
  ['astro', astro],
  ['nuxt', nuxt],
  ['react-router', reactRouter],
  ['nestjs', nest],
  ['nitro', nitroBased],
  ['angular', angular],
];

/**
 * What a build produced that says how to run it, when nothing before the build did: Nitro's
 * server (`.output/server/index.mjs`, written by TanStack Start, SolidStart, Analog, Nuxt and
 * Nitro's own builds), started as a Node release.
 */
export const NITRO_BUILD_OUTPUT = {
  entry: '.output/server/index.mjs',
  start: 'node .output/server/index.mjs',
  outputDir: '.output/public',
  buildOutput: '.output',
  reason:
    "the build wrote Nitro's node server (.output/server/index.mjs, reads PORT): started with node .output/server/index.mjs, public files in .output/public",
} as const;
/** Values of `framework` in slipway.json besides the recognised frameworks. */
export const GENERIC_FRAMEWORKS = ['static', 'node'];

/** What a framework dependency without a usable plan means, for the refusal message. */
export function unplacedFramework(input: FrameworkInput): string | null {
  const text = (names: string[]) => code(config(input, names));
  if (input.deps['@sveltejs/kit']) {
    const adapter = /from\s+["'](@sveltejs\/adapter-[a-z-]+)["']/.exec(text(['svelte.config.js', 'svelte.config.mjs', 'svelte.config.ts']))?.[1];
    return `SvelteKit with ${adapter ?? 'an unknown adapter'} (svelte.config.js): that adapter targets another platform. Use @sveltejs/adapter-node (a server) or @sveltejs/adapter-static (static files)`;
  }
  if (input.deps['astro']) {
    const adapter = /from\s+["'](@astrojs\/[a-z-]+)["']/.exec(text(['astro.config.mjs', 'astro.config.ts', 'astro.config.js']))?.[1] ?? 'a server adapter';
    return `Astro with ${adapter} (astro.config): that adapter targets another platform. Use @astrojs/node in standalone mode, or no adapter for a static site (or add a "start" script for middleware mode)`;
  }
  return null;
}
