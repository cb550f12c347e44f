import { join } from 'node:path';
import { analyzeSource, detectSpec, lockedVersion, readProjectDir, type AnalyzeContext, type ProjectFile, type ProjectSpec } from './index.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures');
const context: AnalyzeContext = { secretNames: [], signInEnabled: false, runtimeNodeVersion: 'v20.20.2' };
const analyze = async (name: string) => analyzeSource(await readProjectDir(join(FIXTURES, name)), context);
const file = (path: string, text: string): ProjectFile => ({ path, text, bytes: Buffer.byteLength(text) });

type Expected = Omit<ProjectSpec, 'files'>;
/** The starters' generators install with npm and leave package-lock.json (create-vite leaves none). */
const npm = { packageManager: 'npm', packageManagerSource: 'default', lockfile: null, nodeVersion: null, nodeVersionRequest: null } as const;
const npmLocked = {
  packageManager: 'npm',
  packageManagerSource: 'lockfile',
  lockfile: 'package-lock.json',
  nodeVersion: null,
  nodeVersionRequest: null,
} as const;
const none: Pick<ProjectSpec, 'overrides' | 'env' | 'usesSignIn'> = { overrides: [], env: [], usesSignIn: false };
const envPort = { source: 'env', fixed: null } as const;

/** One row per official starter: the whole spec, and the warnings that must (and only those) come with it. */
const STARTERS: [string, Expected, string[]][] = [
  [
    'next-app-router',
    {
      kind: 'node',
      framework: 'next',
      frameworkVersion: '16.0.3',
      frameworkVersionSource: 'lockfile',
      packageManager: 'npm',
      packageManagerSource: 'lockfile',
      lockfile: 'package-lock.json',
      nodeVersion: null,
      nodeVersionRequest: { value: '24', source: '.node-version' },
      commands: { install: 'npm ci', build: 'npm run build', start: 'npm run start' },
      outputDir: '.next/static',
      buildOutput: '.next',
      startSource: 'script',
      spaFallback: false,
      port: envPort,
      reasons: [
        'package.json depends on next 16.0.3',
        'app router (app/)',
        'package.json scripts.build: next build',
        'package.json scripts.start: next start (reads PORT)',
      ],
      ...none,
    },
    [],
  ],
  [
    'next-pages-standalone',
    {
      kind: 'node',
      framework: 'next',
      frameworkVersion: '16.0.3',
      frameworkVersionSource: 'lockfile',
      packageManager: 'pnpm',
      packageManagerSource: 'lockfile',
      lockfile: 'pnpm-lock.yaml',
      nodeVersion: null,
      nodeVersionRequest: null,
      commands: {
        install: 'pnpm install --frozen-lockfile',
        build: 'pnpm run build && cp -r .next/static .next/standalone/.next/ && cp -r public .next/standalone/',
        start: 'node .next/standalone/server.js',
      },
      outputDir: '.next/static',
      buildOutput: '.next/standalone',
      startSource: 'framework',
      spaFallback: false,
      port: envPort,
      reasons: [
        'package.json depends on next 16.0.3',
        'pages router (pages/)',
        'package.json scripts.build: next build',
        "next.config.ts: output 'standalone': .next/static and public/ are copied next to .next/standalone/server.js, as Next.js documents",
      ],
      ...none,
    },
    [],
  ],
  [
    'sveltekit-node',
    {
      kind: 'node',
      framework: 'sveltekit',
      frameworkVersion: '2.70.4',
      frameworkVersionSource: 'lockfile',
      ...npmLocked,
      commands: { install: 'npm ci', build: 'npm run build', start: 'node build' },
      outputDir: 'build/client',
      buildOutput: 'build',
      startSource: 'framework',
      spaFallback: false,
      port: envPort,
      reasons: [
        'package.json depends on @sveltejs/kit ^2.48.5',
        'svelte.config.js: @sveltejs/adapter-node',
        'package.json scripts.build: vite build',
        'adapter-node: Node server in build/, started with node build (reads PORT)',
      ],
      ...none,
    },
    [],
  ],
  [
    'sveltekit-static',
    {
      kind: 'static',
      framework: 'sveltekit',
      frameworkVersion: '2.70.4',
      frameworkVersionSource: 'lockfile',
      ...npmLocked,
      commands: { install: 'npm ci', build: 'npm run build', start: null },
      outputDir: 'build',
      buildOutput: 'build',
      startSource: null,
      spaFallback: false,
      port: null,
      reasons: [
        'package.json depends on @sveltejs/kit ^2.48.5',
        'svelte.config.js: @sveltejs/adapter-static',
        'package.json scripts.build: vite build',
        'adapter-static writes pages to build/',
      ],
      ...none,
    },
    [],
  ],
  [
    'sveltekit-auto',
    {
      kind: 'node',
      framework: 'sveltekit',
      frameworkVersion: '2.70.4',
      frameworkVersionSource: 'lockfile',
      ...npmLocked,
      commands: {
        install: 'npm ci && npm install --no-save @sveltejs/adapter-node@^5',
        build: "sed -i 's#@sveltejs/adapter-auto#@sveltejs/adapter-node#' svelte.config.js && npm run build",
        start: 'node build',
      },
      outputDir: 'build/client',
      buildOutput: 'build',
      startSource: 'framework',
      spaFallback: false,
      port: envPort,
      reasons: [
        'package.json depends on @sveltejs/kit ^2.48.5',
        'svelte.config.js: @sveltejs/adapter-auto',
        'package.json scripts.build: vite build',
        '@sveltejs/adapter-auto cannot detect this platform: built with @sveltejs/adapter-node instead',
      ],
      ...none,
    },
    ['framework_adapter_replaced'],
  ],
  [
    'astro-static',
    {
      kind: 'static',
      framework: 'astro',
      frameworkVersion: '5.18.2',
      frameworkVersionSource: 'lockfile',
      ...npmLocked,
      commands: { install: 'npm ci', build: 'npm run build', start: null },
      outputDir: 'dist',
      buildOutput: 'dist',
      startSource: null,
      spaFallback: false,
      port: null,
      reasons: [
        'package.json depends on astro ^5.16.0',
        'package.json scripts.build: astro build',
        'astro.config.mjs: no server adapter: static site in dist/',
      ],
      ...none,
    },
    [],
  ],
  [
    'astro-node',
    {
      kind: 'node',
      framework: 'astro',
      frameworkVersion: '5.18.2',
      frameworkVersionSource: 'lockfile',
      ...npmLocked,
      nodeVersionRequest: { value: '22', source: '.nvmrc' },
      commands: { install: 'npm ci', build: 'npm run build', start: 'node ./dist/server/entry.mjs' },
      outputDir: 'dist/client',
      buildOutput: 'dist',
      startSource: 'framework',
      spaFallback: false,
      port: envPort,
      reasons: [
        'package.json depends on astro ^5.16.0',
        'package.json scripts.build: astro build',
        'astro.config.mjs: @astrojs/node standalone: node ./dist/server/entry.mjs (reads PORT)',
      ],
      ...none,
    },
    [],
  ],
  [
    'nuxt-app',
    {
      kind: 'node',
      framework: 'nuxt',
      frameworkVersion: '4.4.5',
      frameworkVersionSource: 'lockfile',
      ...npmLocked,
      commands: { install: 'npm ci', build: 'npm run build', start: 'node .output/server/index.mjs' },
      outputDir: '.output/public',
      buildOutput: '.output',
      startSource: 'framework',
      spaFallback: false,
      port: envPort,
      reasons: [
        'package.json depends on nuxt ^4.2.1',
        'package.json scripts.build: nuxt build',
        'Nitro node server: node .output/server/index.mjs (reads PORT)',
      ],
      ...none,
    },
    [],
  ],
  [
    'nuxt-spa',
    {
      kind: 'spa',
      framework: 'nuxt',
      frameworkVersion: '4.4.5',
      frameworkVersionSource: 'lockfile',
      ...npmLocked,
      commands: { install: 'npm ci', build: 'npm run generate', start: null },
      outputDir: '.output/public',
      buildOutput: '.output/public',
      startSource: null,
      spaFallback: true,
      port: null,
      reasons: [
        'package.json depends on nuxt ^4.2.1',
        'nuxt.config.ts: ssr: false (single-page app)',
        'package.json scripts.generate: nuxt generate: static files in .output/public',
      ],
      ...none,
    },
    [],
  ],
  [
    'react-router-app',
    {
      kind: 'node',
      framework: 'react-router',
      frameworkVersion: '7.18.4',
      frameworkVersionSource: 'lockfile',
      ...npmLocked,
      commands: { install: 'npm ci', build: 'npm run build', start: 'npm run start' },
      outputDir: 'build/client',
      buildOutput: 'build',
      startSource: 'script',
      spaFallback: false,
      port: envPort,
      reasons: [
        'package.json depends on @react-router/dev ^7.18.4 (framework mode)',
        'package.json scripts.build: react-router build',
        'package.json scripts.start: react-router-serve ./build/server/index.js (reads PORT)',
      ],
      ...none,
    },
    [],
  ],
  [
    'react-router-spa',
    {
      kind: 'spa',
      framework: 'react-router',
      frameworkVersion: '7.18.4',
      frameworkVersionSource: 'lockfile',
      ...npmLocked,
      commands: { install: 'npm ci', build: 'npm run build', start: null },
      outputDir: 'build/client',
      buildOutput: 'build/client',
      startSource: null,
      spaFallback: true,
      port: null,
      reasons: [
        'package.json depends on @react-router/dev ^7.18.4 (framework mode)',
        'package.json scripts.build: react-router build',
        'react-router.config.ts: ssr: false (SPA mode): static files in build/client',
      ],
      ...none,
    },
    [],
  ],
  [
    'nestjs-app',
    {
      kind: 'node',
      framework: 'nestjs',
      frameworkVersion: '11.2.10',
      frameworkVersionSource: 'lockfile',
      ...npmLocked,
      commands: { install: 'npm ci', build: 'npm run build', start: 'node dist/main' },
      outputDir: null,
      buildOutput: 'dist',
      startSource: 'framework',
      spaFallback: false,
      port: envPort,
      reasons: [
        'package.json depends on @nestjs/core ^11.0.1',
        'package.json scripts.build: nest build (compiles to dist/)',
        'started with node dist/main (scripts.start runs nest start, which recompiles)',
      ],
      overrides: [],
      env: ['PORT'],
      usesSignIn: false,
    },
    [],
  ],
  ...(['react', 'vue', 'svelte'] as const).map((ui): [string, Expected, string[]] => [
    `vite-${ui}`,
    {
      kind: 'spa',
      framework: 'vite',
      frameworkVersion: '^7.2.4',
      frameworkVersionSource: 'package.json',
      ...npm,
      commands: { install: 'npm install', build: 'npm run build', start: null },
      outputDir: 'dist',
      buildOutput: 'dist',
      startSource: null,
      spaFallback: true,
      port: null,
      reasons: [
        `package.json scripts.build: ${{ react: 'tsc -b && vite build', vue: 'vue-tsc -b && vite build', svelte: 'vite build' }[ui]}`,
        `package.json depends on vite ^7.2.4 with ${{ react: 'React', vue: 'Vue', svelte: 'Svelte' }[ui]}: single-page app built to dist/`,
      ],
      ...none,
    },
    ['no_lockfile'],
  ]),
  [
    'hono-node',
    {
      kind: 'node',
      framework: 'hono',
      frameworkVersion: '4.13.19',
      frameworkVersionSource: 'lockfile',
      ...npmLocked,
      commands: { install: 'npm ci', build: 'npm run build', start: 'npm run start' },
      outputDir: null,
      buildOutput: null,
      startSource: 'script',
      spaFallback: false,
      port: envPort,
      reasons: [
        'package.json scripts.build: tsc',
        'package.json scripts.start: node dist/index.js',
        'package.json depends on hono ^4.10.6',
        'the code reads process.env.PORT',
      ],
      overrides: [],
      env: ['PORT'],
      usesSignIn: false,
    },
    [],
  ],
  ...(['express', 'koa'] as const).map((server): [string, Expected, string[]] => [
    `${server}-app`,
    {
      kind: 'node',
      framework: server,
      frameworkVersion: { express: '5.3.0', koa: '3.3.0' }[server],
      frameworkVersionSource: 'lockfile',
      ...npmLocked,
      commands: { install: 'npm ci', build: null, start: 'npm run start' },
      outputDir: null,
      buildOutput: null,
      startSource: 'script',
      spaFallback: false,
      port: envPort,
      reasons: [
        `package.json scripts.start: node ${{ express: 'index.js', koa: 'app.js' }[server]}`,
        `package.json depends on ${server} ${{ express: '^5.1.0', koa: '^3.0.0' }[server]}`,
        'the code reads process.env.PORT',
      ],
      overrides: [],
      env: ['PORT'],
      usesSignIn: false,
    },
    [],
  ]),
  [
    'fastify-app',
    {
      kind: 'node',
      framework: 'fastify',
      frameworkVersion: '5.12.8',
      frameworkVersionSource: 'lockfile',
      ...npmLocked,
      commands: { install: 'npm ci', build: null, start: 'npm run start' },
      outputDir: null,
      buildOutput: null,
      startSource: 'script',
      spaFallback: false,
      port: envPort,
      reasons: [
        'package.json scripts.start: fastify start -l info app.js',
        'package.json depends on fastify ^5.0.0',
        'the start script runs fastify start (fastify-cli), which reads PORT',
      ],
      ...none,
    },
    [],
  ],
];

describe('framework recognition: the official starters', () => {
  it.each(STARTERS)('%s', async (name, expected, warnings) => {
    const { spec, warnings: found } = await analyze(name);
    const { files, ...rest } = spec;
    expect(rest).toEqual(expected);
    expect(files.count).toBeGreaterThan(1);
    expect(found.map((w) => w.code).sort()).toEqual(warnings);
  });

  it('says what adapter-auto was replaced with and what to install', async () => {
    const { warnings } = await analyze('sveltekit-auto');
    expect(warnings.find((w) => w.code === 'framework_adapter_replaced')).toMatchObject({
      path: 'svelte.config.js',
      message: expect.stringMatching(/adapter-node@\^5.*install @sveltejs\/adapter-node as a devDependency/),
    });
  });

  it('installs the adapter-node major that matches the SvelteKit major (the newest may need a newer kit)', () => {
    const project = (kit: string, pm: 'npm' | 'pnpm') => [
      file(
        'package.json',
        JSON.stringify({
          scripts: { build: 'vite build' },
          devDependencies: { '@sveltejs/kit': kit, '@sveltejs/adapter-auto': '^7.0.0' },
          packageManager: `${pm}@10.0.0`,
        }),
      ),
      file('svelte.config.js', "import adapter from '@sveltejs/adapter-auto';"),
    ];
    expect(detectSpec(project('^2.48.5', 'npm')).commands.install).toBe('npm install && npm install --no-save @sveltejs/adapter-node@^5');
    expect(detectSpec(project('~3.0.0', 'pnpm')).commands.install).toBe('pnpm install && pnpm add -D @sveltejs/adapter-node@^6');
    expect(detectSpec(project('latest', 'npm')).commands.install).toBe('npm install && npm install --no-save @sveltejs/adapter-node');
  });

  it('adding unrelated files never changes the decision (seeded random sets)', async () => {
    let seed = 0x5eed;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
    const dirs = ['', 'docs/', 'notes/', 'assets/img/', 'design/', '.github/workflows/', 'scripts-old/'];
    const names = ['README.md', 'LICENSE', 'CHANGELOG.md', 'logo.png', 'todo.txt', 'ci.yml', 'notes.md', '.editorconfig', '.prettierrc', 'data.csv'];
    const words = ['next', 'astro', 'nuxt', 'svelte', 'vite', 'build', 'start', 'adapter', 'output', 'standalone', 'ssr: false', 'PORT', '3000', '{', '"'];
    const decision = (spec: ProjectSpec) => ({ ...spec, files: null });
    for (const [name] of STARTERS) {
      const base = await readProjectDir(join(FIXTURES, name));
      const expected = decision(detectSpec(base));
      for (let round = 0; round < 20; round += 1) {
        const extra = Array.from({ length: 1 + Math.floor(random() * 6) }, () => {
          const path = `${pick(dirs)}${pick(names)}`;
          return file(path, Array.from({ length: 12 }, () => pick(words)).join(' '));
        }).filter((f) => !base.some((b) => b.path === f.path));
        expect([name, decision(detectSpec([...base, ...extra]))]).toEqual([name, expected]);
      }
    }
  });
});

/**
 * PENDING (issue 32, second wave): the starters below were added before the analyzer recognises them
 * (the lead writes that support on its own branch), so these rows FAIL until it is merged. They hold
 * what the starters' builds showed (see tools/frameworks/README.md), not the whole spec: reasons and
 * sources are the analyzer's to word. The monorepo (turbo-monorepo) is checked by the framework suite
 * (turbo-web, turbo-docs, turbo-ambiguous), since it needs a root directory.
 */
const SECOND_WAVE: [string, Partial<Expected>, string[]][] = [
  [
    'astro-basics',
    {
      kind: 'static',
      framework: 'astro',
      frameworkVersion: '7.3.5',
      frameworkVersionSource: 'lockfile',
      packageManager: 'npm',
      lockfile: 'package-lock.json',
      commands: { install: 'npm ci', build: 'npm run build', start: null },
      outputDir: 'dist',
      spaFallback: false,
      port: null,
    },
    [],
  ],
  [
    'angular-static',
    {
      kind: 'spa',
      framework: 'angular',
      frameworkVersion: '22.2.6',
      frameworkVersionSource: 'lockfile',
      packageManager: 'npm',
      lockfile: 'package-lock.json',
      commands: { install: 'npm ci', build: 'npm run build', start: null },
      outputDir: 'dist/angular-static/browser',
      spaFallback: true,
      port: null,
    },
    [],
  ],
  [
    'angular-ssr',
    {
      kind: 'node',
      framework: 'angular',
      frameworkVersion: '22.2.0',
      frameworkVersionSource: 'lockfile',
      packageManager: 'npm',
      lockfile: 'package-lock.json',
      commands: { install: 'npm ci', build: 'npm run build', start: 'node dist/angular-ssr/server/server.mjs' },
      outputDir: 'dist/angular-ssr/browser',
      spaFallback: false,
      port: envPort,
    },
    [],
  ],
  [
    'hono-fixed-port',
    {
      kind: 'node',
      framework: 'hono',
      frameworkVersion: '4.13.19',
      frameworkVersionSource: 'lockfile',
      ...npmLocked,
      commands: { install: 'npm ci', build: 'npm run build', start: 'npm run start' },
      outputDir: null,
      spaFallback: false,
      port: { source: 'fixed', fixed: 3000 },
    },
    ['port_not_from_env'],
  ],
  [
    'tanstack-start',
    {
      kind: 'node',
      framework: 'tanstack-start',
      frameworkVersion: '1.169.5',
      frameworkVersionSource: 'lockfile',
      ...npmLocked,
      outputDir: 'dist/client',
      spaFallback: false,
      port: envPort,
    },
    [],
  ],
  [
    'solid-start',
    {
      kind: 'node',
      framework: 'solid-start',
      frameworkVersion: '2.0.5',
      frameworkVersionSource: 'lockfile',
      packageManager: 'npm',
      lockfile: 'package-lock.json',
      outputDir: '.output/public',
      spaFallback: false,
      port: envPort,
    },
    [],
  ],
];

describe('framework recognition: the second wave of starters (issue 32)', () => {
  it.each(SECOND_WAVE)('%s', async (name, expected, warnings) => {
    const { spec, warnings: found } = await analyze(name);
    expect(spec).toMatchObject(expected);
    expect(found.map((w) => w.code).sort()).toEqual(warnings);
  });
});

describe('lockfile versions', () => {
  it('reads npm, pnpm and yarn (classic and berry) lockfiles, null when absent', () => {
    expect(lockedVersion(file('package-lock.json', JSON.stringify({ packages: { 'node_modules/astro': { version: '5.16.1' } } })), 'astro')).toBe('5.16.1');
    expect(lockedVersion(file('package-lock.json', JSON.stringify({ dependencies: { astro: { version: '1.2.3' } } })), 'astro')).toBe('1.2.3');
    expect(
      lockedVersion(
        file(
          'pnpm-lock.yaml',
          "importers:\n  .:\n    devDependencies:\n      '@sveltejs/kit':\n        specifier: ^2.48.5\n        version: 2.49.0(@sveltejs/vite-plugin-svelte@6.2.1)\n",
        ),
        '@sveltejs/kit',
      ),
    ).toBe('2.49.0');
    expect(lockedVersion(file('yarn.lock', 'nuxt@^4.2.1:\n  version "4.2.1"\n  resolved "x"\n'), 'nuxt')).toBe('4.2.1');
    expect(lockedVersion(file('yarn.lock', '"nuxt@npm:^4.2.1":\n  version: 4.2.2\n'), 'nuxt')).toBe('4.2.2');
    expect(lockedVersion(file('yarn.lock', 'nuxt-ui@^1.0.0:\n  version "1.0.0"\n'), 'nuxt')).toBeNull();
    expect(lockedVersion(file('package-lock.json', '{not json'), 'astro')).toBeNull();
    expect(lockedVersion(undefined, 'astro')).toBeNull();
  });
});

describe('slipway.json overrides', () => {
  const pkg = (body: object) => file('package.json', JSON.stringify(body));
  const svelte = async () => (await readProjectDir(join(FIXTURES, 'sveltekit-node'))).filter((f) => f.path !== 'slipway.json');

  it('replaces detected fields one by one and says so', async () => {
    const spec = detectSpec([
      ...(await svelte()),
      file('slipway.json', JSON.stringify({ buildCommand: 'npm run build:prod', startCommand: 'node build/index.js', outputDirectory: 'build/client/' })),
    ]);
    expect(spec).toMatchObject({
      kind: 'node',
      framework: 'sveltekit',
      commands: { install: 'npm ci', build: 'npm run build:prod', start: 'node build/index.js' },
      outputDir: 'build/client',
      buildOutput: 'build/client',
      startSource: 'slipway.json',
      overrides: ['buildCommand', 'outputDirectory', 'startCommand'],
    });
    expect(spec.reasons).toEqual(expect.arrayContaining(['slipway.json buildCommand: npm run build:prod', 'slipway.json startCommand: node build/index.js']));
  });

  it('"framework" picks the recogniser, or static/node', async () => {
    const files = [
      pkg({ scripts: { build: 'astro build' }, dependencies: { astro: '^5.0.0', next: '16.0.0' } }),
      file('astro.config.mjs', 'export default {}'),
    ];
    expect(detectSpec(files).framework).toBe('next');
    expect(detectSpec([...files, file('slipway.json', '{"framework":"astro"}')])).toMatchObject({
      framework: 'astro',
      kind: 'static',
      outputDir: 'dist',
      overrides: ['framework'],
    });
    const site = detectSpec([
      pkg({ scripts: { build: 'node make.mjs', start: 'node serve.mjs' } }),
      file('slipway.json', '{"framework":"static","outputDirectory":"site"}'),
    ]);
    expect(site).toMatchObject({
      kind: 'static',
      framework: 'static',
      commands: { build: 'npm run build', start: null },
      outputDir: 'site',
      buildOutput: 'site',
    });
  });

  it('deploys what detection cannot place when the author says how', () => {
    const files = [pkg({ dependencies: { 'left-pad': '1.3.0' } }), file('bin/serve.mjs', 'listen(process.env.PORT)')];
    expect(() => detectSpec(files)).toThrow(expect.objectContaining({ code: 'unsupported_project' }));
    expect(detectSpec([...files, file('slipway.json', '{"startCommand":"node bin/serve.mjs"}')])).toMatchObject({
      kind: 'node',
      commands: { install: 'npm install', start: 'node bin/serve.mjs' },
      port: { source: 'env' },
      startSource: 'slipway.json',
    });
  });

  it.each([
    ['not JSON', '{framework:', /slipway\.json is not valid JSON/],
    ['an array', '[]', /not valid JSON: not an object/],
    ['an unknown field (typo)', '{"buildComand":"x"}', /unknown field "buildComand"/],
    ['a number', '{"buildCommand":1}', /non-empty one-line string/],
    ['an empty string', '{"startCommand":"  "}', /non-empty one-line string/],
    ['a newline', '{"startCommand":"a\\nb"}', /non-empty one-line string/],
    ['an absolute output', '{"outputDirectory":"/etc"}', /relative directory inside the project/],
    ['a parent output', '{"outputDirectory":"../x"}', /relative directory inside the project/],
    ['a nested parent output', '{"outputDirectory":"dist/../../x"}', /relative directory inside the project/],
    ['a backslash output', '{"outputDirectory":"..\\\\x"}', /relative directory inside the project/],
    ['an unknown framework', '{"framework":"rails"}', /"framework" is "rails"; known: next, sveltekit/],
    ['a framework it is not', '{"framework":"nuxt"}', /does not look like one/],
  ])('refuses slipway.json with %s (invalid_slipway_json)', async (_what, text, message) => {
    expect(() =>
      detectSpec([...paths(['index.html']), pkg({ scripts: { build: 'vite build' }, devDependencies: { vite: '7.0.0' } }), file('slipway.json', text)]),
    ).toThrow(expect.objectContaining({ code: 'invalid_slipway_json', message: expect.stringMatching(message) }));
  });
  const paths = (names: string[]) => names.map((n) => file(n, '<script type="module" src="/main.js"></script>'));
});

describe('refusals say what was found, where the analyzer looked, and what to change', () => {
  it('a Python project', async () => {
    await expect(analyze('unsupported')).rejects.toMatchObject({
      code: 'unsupported_project',
      message: expect.stringMatching(
        /no package\.json and no index\.html at the top level\. Looked at the top level for package\.json .* This looks like a Python project .*add slipway\.json/,
      ),
    });
  });

  it('a project one folder down', () => {
    expect(() => detectSpec([file('web/package.json', '{}'), file('README.md', 'hi')])).toThrow(
      expect.objectContaining({ message: expect.stringContaining('Found web/package.json one folder down: deploy that folder instead') }),
    );
  });

  it("SvelteKit or Astro with another platform's adapter", () => {
    const kit = [
      file(
        'package.json',
        JSON.stringify({ scripts: { build: 'vite build' }, devDependencies: { '@sveltejs/kit': '^2.0.0', '@sveltejs/adapter-vercel': '^5.0.0' } }),
      ),
      file('svelte.config.js', "import adapter from '@sveltejs/adapter-vercel';\nexport default { kit: { adapter: adapter() } };"),
    ];
    expect(() => detectSpec(kit)).toThrow(
      expect.objectContaining({
        code: 'unsupported_project',
        message: expect.stringMatching(/SvelteKit with @sveltejs\/adapter-vercel \(svelte\.config\.js\).*Use @sveltejs\/adapter-node/),
      }),
    );
    const astro = [
      file('package.json', JSON.stringify({ scripts: { build: 'astro build' }, dependencies: { astro: '^5.0.0', '@astrojs/netlify': '^6.0.0' } })),
      file('astro.config.mjs', "import netlify from '@astrojs/netlify';\nexport default { adapter: netlify() };"),
    ];
    expect(() => detectSpec(astro)).toThrow(
      expect.objectContaining({
        code: 'unsupported_project',
        message: expect.stringMatching(/Astro with @astrojs\/netlify.*Use @astrojs\/node in standalone mode/),
      }),
    );
  });

  it('a commented-out option does not count', () => {
    const files = [
      file('package.json', JSON.stringify({ scripts: { build: 'next build', start: 'next start' }, dependencies: { next: '16.0.3' } })),
      file('next.config.js', "module.exports = {\n  // output: 'standalone',\n  /* output: 'export' */\n};"),
    ];
    expect(detectSpec(files)).toMatchObject({ kind: 'node', commands: { start: 'npm run start' }, buildOutput: '.next' });
  });

  it('a Next.js custom server keeps its own start and is judged on its own code', () => {
    const files = [
      file('package.json', JSON.stringify({ scripts: { build: 'next build', start: 'node server.js' }, dependencies: { next: '16.0.3' } })),
      file('server.js', 'app.listen(8080)'),
    ];
    const { spec, warnings } = analyzeSource(files, context);
    expect(spec).toMatchObject({ framework: 'next', startSource: 'script', port: { source: 'fixed', fixed: 8080 } });
    expect(warnings.map((w) => w.code)).toContain('port_not_from_env');
  });
});
