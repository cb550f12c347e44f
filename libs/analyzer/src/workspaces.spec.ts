import { analyzeSource, detectSpec, type ProjectFile } from './index.js';
import { AnalyzeError } from './types.js';

const file = (path: string, content: string | object): ProjectFile => {
  const text = typeof content === 'string' ? content : JSON.stringify(content);
  return { path, text, bytes: Buffer.byteLength(text) };
};
const context = { secretNames: [], signInEnabled: false };

/** create-turbo's layout: two Next.js apps, a UI library built by neither, two config packages. */
function turbo(extra: ProjectFile[] = []): ProjectFile[] {
  return [
    file('package.json', {
      name: 'my-turborepo',
      private: true,
      scripts: { build: 'turbo run build', dev: 'turbo run dev' },
      devDependencies: { turbo: '^2.6.0' },
      packageManager: 'pnpm@9.15.9',
    }),
    file('pnpm-workspace.yaml', 'packages:\n  - "apps/*"\n  - "packages/*"\n'),
    file('pnpm-lock.yaml', "lockfileVersion: '9.0'\n"),
    file('turbo.json', { tasks: { build: { dependsOn: ['^build'] } } }),
    file('apps/web/package.json', {
      name: 'web',
      private: true,
      scripts: { dev: 'next dev --port 3000', build: 'next build', start: 'next start' },
      dependencies: { '@repo/ui': 'workspace:*', next: '^16.0.0', react: '^19' },
    }),
    file('apps/web/app/page.tsx', 'export default function Page() { return null }'),
    file('apps/docs/package.json', {
      name: 'docs',
      private: true,
      scripts: { dev: 'next dev --port 3001', build: 'next build', start: 'next start' },
      dependencies: { '@repo/ui': 'workspace:*', next: '^16.0.0' },
    }),
    file('apps/docs/app/page.tsx', 'export default function Page() { return null }'),
    file('packages/ui/package.json', { name: '@repo/ui', scripts: { lint: 'eslint .' }, exports: { './button': './src/button.tsx' } }),
    file('packages/ui/src/button.tsx', 'export const Button = () => null'),
    file('packages/typescript-config/package.json', { name: '@repo/typescript-config', private: true }),
    ...extra,
  ];
}

function refusal(run: () => unknown): AnalyzeError {
  try {
    run();
  } catch (error) {
    if (error instanceof AnalyzeError) return error;
    throw error;
  }
  throw new Error('expected the analysis to refuse the project');
}

describe('monorepos', () => {
  it('two applications and no choice: ambiguous_project, listing both and the exact line to add', () => {
    const error = refusal(() => detectSpec(turbo()));
    expect(error.code).toBe('ambiguous_project');
    expect(error.message).toContain('apps/docs, apps/web');
    expect(error.message).toContain('"rootDirectory": "apps/docs"');
    expect(error.message).toContain('--root-directory');
  });

  it('slipway.json "rootDirectory" chooses one: installed at the top level, built and started in its folder', () => {
    const spec = detectSpec(turbo([file('slipway.json', { rootDirectory: 'apps/web/' })]));
    expect(spec).toMatchObject({
      kind: 'node',
      framework: 'next',
      rootDirectory: 'apps/web',
      packageManager: 'pnpm',
      lockfile: 'pnpm-lock.yaml',
      commands: { install: 'pnpm install --frozen-lockfile', build: 'cd apps/web && pnpm run build', start: 'cd apps/web && pnpm run start' },
      outputDir: 'apps/web/.next/static',
      buildOutput: 'apps/web/.next',
      workspace: { declaredIn: 'pnpm-workspace.yaml', tool: 'turbo', candidates: ['apps/docs', 'apps/web'], builtFirst: [] },
    });
    expect(spec.reasons[0]).toBe('slipway.json "rootDirectory": apps/web');
  });

  it("the deploy's rootDirectory field wins over slipway.json's, and says so", () => {
    const spec = analyzeSource(turbo([file('slipway.json', { rootDirectory: 'apps/web' })]), { ...context, rootDirectory: 'apps/docs' }).spec;
    expect(spec.rootDirectory).toBe('apps/docs');
    expect(spec.reasons[0]).toBe('the deploy\'s rootDirectory field: apps/docs (over slipway.json "rootDirectory": apps/web)');
  });

  it('a workspace package the app depends on that has a build of its own is built first', () => {
    const files = turbo().map((f) => (f.path === 'packages/ui/package.json' ? file(f.path, { name: '@repo/ui', scripts: { build: 'tsc' } }) : f));
    const spec = analyzeSource(files, { ...context, rootDirectory: 'apps/web' }).spec;
    expect(spec.commands.build).toBe('(cd packages/ui && pnpm run build) && cd apps/web && pnpm run build');
    expect(spec.workspace?.builtFirst).toEqual(['packages/ui']);
  });

  it('the only application of a workspace is chosen without being named', () => {
    const files = turbo().filter((f) => !f.path.startsWith('apps/docs/'));
    const spec = detectSpec(files);
    expect(spec.rootDirectory).toBe('apps/web');
    expect(spec.reasons[0]).toBe('the only application of the workspace (pnpm-workspace.yaml): apps/web');
  });

  it('npm workspaces (package.json "workspaces") with a Vite app and an Express server', () => {
    const files = [
      file('package.json', { name: 'root', private: true, workspaces: ['apps/*', 'packages/*'] }),
      file('package-lock.json', '{"lockfileVersion":3,"packages":{}}'),
      file('apps/site/package.json', { name: 'site', scripts: { build: 'vite build' }, devDependencies: { vite: '^7' } }),
      file('apps/site/index.html', '<script type="module" src="/src/main.ts"></script>'),
      file('apps/api/package.json', { name: 'api', scripts: { start: 'node server.js' }, dependencies: { express: '^5', shared: '*' } }),
      file('apps/api/server.js', 'app.listen(process.env.PORT)'),
      file('packages/shared/package.json', { name: 'shared', scripts: { build: 'tsc' } }),
    ];
    expect(refusal(() => detectSpec(files)).message).toContain('apps/api, apps/site');
    const api = detectSpec(files, { rootDirectory: 'apps/api' });
    expect(api).toMatchObject({
      kind: 'node',
      framework: 'express',
      packageManager: 'npm',
      commands: { install: 'npm ci', build: '(cd packages/shared && npm run build)', start: 'cd apps/api && npm run start' },
      port: { source: 'env' },
    });
    const site = detectSpec(files, { rootDirectory: 'apps/site' });
    expect(site).toMatchObject({ kind: 'spa', framework: 'vite', outputDir: 'apps/site/dist', commands: { build: 'cd apps/site && npm run build' } });
  });

  it('a rootDirectory outside any workspace is a project in a sub-folder, installed there with its own lockfile', () => {
    const files = [
      file('README.md', '# two projects'),
      file('site/package.json', { scripts: { start: 'node server.js' }, dependencies: { express: '^5' } }),
      file('site/package-lock.json', '{}'),
      file('site/server.js', 'x.listen(process.env.PORT)'),
    ];
    const spec = detectSpec(files, { rootDirectory: 'site' });
    expect(spec).toMatchObject({
      rootDirectory: 'site',
      lockfile: 'site/package-lock.json',
      commands: { install: 'cd site && npm ci', start: 'cd site && npm run start' },
    });
    expect(spec.workspace).toBeUndefined();
  });

  it.each([
    ['../outside', 'root_directory_invalid'],
    ['/abs', 'root_directory_invalid'],
    ['apps/../..', 'root_directory_invalid'],
    ['apps/$(id)', 'root_directory_invalid'],
    ['apps/none', 'root_directory_invalid'],
    ['packages/typescript-config/src', 'root_directory_invalid'],
  ])('rootDirectory %s is refused with %s', (value, code) => {
    const error = refusal(() => detectSpec(turbo(), { rootDirectory: value }));
    expect(error.code).toBe(code);
  });

  it('a root directory that does not exist lists the candidates', () => {
    expect(refusal(() => detectSpec(turbo(), { rootDirectory: 'apps/wbe' })).message).toBe(
      'rootDirectory "apps/wbe" (the deploy\'s rootDirectory field) is not a directory of the upload; the workspace\'s applications: apps/docs, apps/web',
    );
  });

  it("a Node version declared by the application wins over the top level's", () => {
    const files = turbo([file('.nvmrc', '22\n'), file('apps/docs/.node-version', '24\n')]);
    expect(analyzeSource(files, { ...context, rootDirectory: 'apps/web' }).spec.nodeVersionRequest).toEqual({ value: '22', source: '.nvmrc' });
    expect(analyzeSource(files, { ...context, rootDirectory: 'apps/docs' }).spec.nodeVersionRequest).toEqual({ value: '24', source: '.node-version' });
  });
});

describe('Angular', () => {
  const angularJson = (options: object) =>
    file('angular.json', {
      projects: {
        shop: { projectType: 'application', architect: { build: { builder: '@angular/build:application', options: { outputPath: 'dist/shop', ...options } } } },
      },
    });
  const pkg = file('package.json', {
    scripts: { ng: 'ng', start: 'ng serve', build: 'ng build', 'serve:ssr:shop': 'node dist/shop/server/server.mjs' },
    dependencies: { '@angular/core': '^21.0.0', '@angular/ssr': '^21.0.0', express: '^5' },
  });

  it("with SSR: Angular's own server in dist/<project>/server (never ng serve, never Express's start)", () => {
    const spec = detectSpec([pkg, angularJson({ server: 'src/main.server.ts', outputMode: 'server', ssr: { entry: 'src/server.ts' } })]);
    expect(spec).toMatchObject({
      kind: 'node',
      framework: 'angular',
      commands: { build: 'npm run build', start: 'node dist/shop/server/server.mjs' },
      outputDir: 'dist/shop/browser',
      buildOutput: 'dist/shop',
      port: { source: 'env' },
    });
  });

  it('without SSR: a single-page app in dist/<project>/browser', () => {
    const spec = detectSpec([pkg, angularJson({})]);
    expect(spec).toMatchObject({ kind: 'spa', framework: 'angular', commands: { start: null }, outputDir: 'dist/shop/browser', spaFallback: true });
  });

  it('outputPath as an object, and the older browser builder writing straight into outputPath', () => {
    expect(detectSpec([pkg, angularJson({ outputPath: { base: 'out', browser: '' } })]).outputDir).toBe('out');
    const old = file('angular.json', {
      projects: { shop: { architect: { build: { builder: '@angular-devkit/build-angular:browser', options: { outputPath: 'dist/shop' } } } } },
    });
    expect(detectSpec([pkg, old])).toMatchObject({ kind: 'spa', outputDir: 'dist/shop' });
  });
});

describe('Nitro-based frameworks', () => {
  it.each([
    ['@solidjs/start', 'solid-start'],
    ['@analogjs/platform', 'analog'],
    ['nitro', 'nitro'],
  ])('%s without a start script: node .output/server/index.mjs', (dependency, framework) => {
    const spec = detectSpec([
      file('package.json', { scripts: { dev: 'vite dev', build: 'vite build' }, dependencies: { [dependency]: '^1.0.0', vite: '^7' } }),
    ]);
    expect(spec).toMatchObject({
      kind: 'node',
      framework,
      commands: { build: 'npm run build', start: 'node .output/server/index.mjs' },
      outputDir: '.output/public',
      buildOutput: '.output',
      startSource: 'framework',
      port: { source: 'env' },
    });
  });

  it('TanStack Start without Nitro (its starter): the fetch handler in dist/server served by srvx, installed with it under npm, added otherwise', () => {
    const pkg = file('package.json', {
      type: 'module',
      scripts: { dev: 'vite dev --port 3000', build: 'vite build' },
      dependencies: { '@tanstack/react-start': '1.169.5' },
      devDependencies: { vite: '^8' },
    });
    const vite = file(
      'vite.config.ts',
      "import { tanstackStart } from '@tanstack/react-start/plugin/vite'\nexport default defineConfig({ plugins: [tanstackStart()] })",
    );
    const npm = detectSpec([pkg, vite, file('package-lock.json', '{"packages":{"node_modules/srvx":{"version":"1.0.8"}}}')]);
    expect(npm).toMatchObject({
      framework: 'tanstack-start',
      kind: 'node',
      commands: { install: 'npm ci', start: 'node_modules/.bin/srvx serve --prod -s ../client dist/server/server.js' },
      outputDir: 'dist/client',
      buildOutput: 'dist/server',
      port: { source: 'env' },
    });
    const pnpm = detectSpec([pkg, vite, file('pnpm-lock.yaml', "lockfileVersion: '9.0'\n")]);
    expect(pnpm.commands.install).toBe('pnpm install --frozen-lockfile && pnpm add srvx@^1');
    const withNitro = detectSpec([pkg, file('vite.config.ts', "import { nitro } from 'nitro/vite'\nexport default { plugins: [tanstackStart(), nitro()] }")]);
    expect(withNitro.commands.start).toBe('node .output/server/index.mjs');
  });

  it("a start script that runs Nitro's server (vinxi start) is used and reads PORT", () => {
    const spec = detectSpec([
      file('package.json', { scripts: { build: 'vinxi build', start: 'vinxi start' }, dependencies: { '@solidjs/start': '^1.2.0', vinxi: '^0.5' } }),
    ]);
    expect(spec).toMatchObject({ framework: 'solid-start', commands: { start: 'npm run start' }, startSource: 'script', port: { source: 'env' } });
  });
});
