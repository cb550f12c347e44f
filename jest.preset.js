// Shared jest setup for every project: ESM + @swc/jest (decorator metadata for NestJS),
// workspace libs resolved to their TypeScript sources so tests never need a build.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(fileURLToPath(import.meta.url));
const libs = readdirSync(join(root, 'libs'));

const swc = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true, tsx: true },
    transform: { legacyDecorator: true, decoratorMetadata: true, react: { runtime: 'automatic' } },
    target: 'es2022',
    keepClassNames: true,
  },
  module: { type: 'es6' },
  sourceMaps: 'inline',
};

/** @param {string} projectDir @param {import('jest').Config} [overrides] */
export function projectJestConfig(projectDir, overrides = {}) {
  const mapper = { '^(\\.{1,2}/.*)\\.js$': '$1' };
  for (const lib of libs) mapper[`^@slipway/${lib}$`] = join(root, 'libs', lib, 'src', 'index.ts');
  return {
    rootDir: projectDir,
    displayName: projectDir.slice(root.length + 1),
    testEnvironment: 'node',
    extensionsToTreatAsEsm: ['.ts', '.tsx'],
    transform: { '^.+\\.(t|j)sx?$': ['@swc/jest', swc] },
    moduleNameMapper: mapper,
    testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts'],
    testPathIgnorePatterns: ['/node_modules/', '/dist/'],
    testTimeout: 30_000,
    ...overrides,
  };
}
