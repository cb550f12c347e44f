import js from '@eslint/js';
import jest from 'eslint-plugin-jest';
import tseslint from 'typescript-eslint';
import featureFolders from './tools/eslint/feature-folders.js';
import moduleBoundaries from './tools/eslint/module-boundaries.js';
import platformDataOnly from './tools/eslint/platform-data-only.js';
import redisViaMessaging from './tools/eslint/redis-via-messaging.js';
import serviceAuthOnly from './tools/eslint/service-auth-only.js';

const workspaceRoot = import.meta.dirname;

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/generated/**', '**/coverage/**', 'bench/results/**', '.slipway/**', '.nx/**', '**/fixtures/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: workspaceRoot } },
    plugins: {
      slipway: {
        rules: {
          'module-boundaries': moduleBoundaries,
          'feature-folders': featureFolders,
          'platform-data-only': platformDataOnly,
          'redis-via-messaging': redisViaMessaging,
          'service-auth-only': serviceAuthOnly,
        },
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      'slipway/module-boundaries': [
        'error',
        {
          workspaceRoot,
          // Apps depend on libs, never on each other; libs never on apps; tools may use anything.
          // Test-only libs (libs/testing, libs/s3-emulator) only in tests (`*.spec.ts`, `test/`).
          depConstraints: [
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib'], alsoInTests: ['type:test-lib'] },
            { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib'], alsoInTests: ['type:test-lib'] },
            { sourceTag: 'type:test-lib', onlyDependOnLibsWithTags: ['type:lib', 'type:test-lib'] },
            { sourceTag: 'type:tool', onlyDependOnLibsWithTags: ['*'] },
          ],
        },
      ],
    },
  },
  {
    // The platform database is queried only by libs/platform-data's repositories (issue 21):
    // left out are tests, libs/platform-schema (migrations and their runner) and libs/testing (test set-up).
    files: ['apps/*/src/**/*.ts', 'libs/*/src/**/*.ts', 'tools/*/src/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/test/**', 'libs/platform-data/**', 'libs/platform-schema/**', 'libs/testing/**'],
    rules: { 'slipway/platform-data-only': 'error' },
  },
  {
    // Redis connections are made by libs/messaging's redisConnection(url, role) only (issue 35):
    // left out are tests and libs/testing (test set-up).
    files: ['apps/*/src/**/*.ts', 'libs/*/src/**/*.ts', 'tools/*/src/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/test/**', 'libs/messaging/**', 'libs/testing/**'],
    rules: { 'slipway/redis-via-messaging': 'error' },
  },
  {
    // An application's own `service_auth` schema is queried only by libs/sign-in-core's stores
    // (issue 35): left out are tests and libs/sign-in-sdk, the package an application's server
    // installs (pg and jose only), which reads its own database's session.
    files: ['apps/*/src/**/*.ts', 'apps/*/src/**/*.tsx', 'libs/*/src/**/*.ts', 'tools/*/src/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/test/**', 'libs/sign-in-core/**', 'libs/sign-in-sdk/**'],
    rules: { 'slipway/service-auth-only': 'error' },
  },
  {
    // auth-service's folders import each other only through their index.ts, and never in a circle
    // (apps/auth-service/README.md, "Layout"); its tests may reach inside.
    files: ['apps/auth-service/src/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: { 'slipway/feature-folders': ['error', { root: `${workspaceRoot}/apps/auth-service/src` }] },
  },
  {
    // The gateway's folders likewise (apps/gateway/README.md, "Layout"); its tests may reach inside.
    files: ['apps/gateway/src/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: { 'slipway/feature-folders': ['error', { root: `${workspaceRoot}/apps/gateway/src` }] },
  },
  {
    // A tenant's database handle is made in one place, from a tenant it resolved (tenants/tenant.ts).
    files: ['apps/auth-service/src/**/*.ts'],
    ignores: ['**/*.spec.ts', 'apps/auth-service/src/tenants/tenants.service.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...['TSAsExpression', 'TSTypeAssertion'].map((node) => ({
          selector: `${node} > TSTypeReference.typeAnnotation[typeName.name='TenantDb']`,
          message: 'A TenantDb is made only by TenantsService.db(tenant).',
        })),
      ],
    },
  },
  {
    files: ['**/*.spec.ts', '**/test/**/*.ts'],
    ...jest.configs['flat/recommended'],
    rules: {
      ...jest.configs['flat/recommended'].rules,
      'jest/no-focused-tests': 'error',
      // Tests legitimately branch per object kind and skip by environment; parsed fixtures are untyped.
      'jest/no-conditional-expect': 'off',
      'jest/no-standalone-expect': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      'jest/expect-expect': ['error', { assertFunctionNames: ['expect', 'expect*'] }],
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    // One platform for every sign-in plugin's tests (starting one takes a while): each plugin's
    // file exports the function that registers its tests in tools/e2e/test/sign-in-plugins.spec.ts.
    files: ['tools/e2e/test/sign-in-plugins/*.ts'],
    rules: { 'jest/no-export': 'off' },
  },
  {
    files: ['tools/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly' } },
  },
);
