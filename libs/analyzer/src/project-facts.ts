import { AnalyzeError, type ProjectFile } from './types.js';

export interface PackageJson {
  name?: string;
  main?: string;
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  engines?: { node?: string };
  packageManager?: string;
}

/** `slipway.json` at the project's top level: what to use when detection is wrong. */
export interface SlipwayOverrides {
  framework?: string;
  installCommand?: string;
  buildCommand?: string;
  startCommand?: string;
  outputDirectory?: string;
  /** The application's directory inside the upload (a monorepo's `apps/web`), as Vercel's "Root Directory". */
  rootDirectory?: string;
}

export const OVERRIDE_FILE = 'slipway.json';
const OVERRIDE_KEYS = ['framework', 'installCommand', 'buildCommand', 'startCommand', 'outputDirectory', 'rootDirectory'] as const;
/** A relative directory inside the project: no absolute path, no `..`, no backslash or control character. */
const SAFE_DIR = /^(?!\/)(?!.*(?:^|\/)\.\.(?:\/|$))[A-Za-z0-9._@+\-/]+$/;

function parseObject(file: ProjectFile, code: 'invalid_package_json' | 'invalid_slipway_json'): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(file.text ?? '');
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not an object');
    return value as Record<string, unknown>;
  } catch (error) {
    throw new AnalyzeError(code, `${file.path} is not valid JSON: ${(error as Error).message}`);
  }
}

export function parsePackageJson(file: ProjectFile | undefined): PackageJson | null {
  return file ? (parseObject(file, 'invalid_package_json') as PackageJson) : null;
}

/** Reads `slipway.json`; unknown keys, non-strings and unsafe directories are refused, so a typo is not silently ignored. */
export function parseOverrides(file: ProjectFile | undefined): SlipwayOverrides {
  if (!file) return {};
  const value = parseObject(file, 'invalid_slipway_json');
  const overrides: SlipwayOverrides = {};
  for (const [key, field] of Object.entries(value)) {
    if (!(OVERRIDE_KEYS as readonly string[]).includes(key)) {
      throw new AnalyzeError('invalid_slipway_json', `slipway.json has an unknown field "${key}"; allowed: ${OVERRIDE_KEYS.join(', ')}`);
    }
    if (typeof field !== 'string' || field.trim() === '' || field.length > 1000 || field.includes('\n')) {
      throw new AnalyzeError('invalid_slipway_json', `slipway.json field "${key}" must be a non-empty one-line string`);
    }
    overrides[key as (typeof OVERRIDE_KEYS)[number]] = field.trim();
  }
  const dir = overrides.outputDirectory;
  if (dir !== undefined && dir !== '.' && !SAFE_DIR.test(dir)) {
    throw new AnalyzeError(
      'invalid_slipway_json',
      `slipway.json "outputDirectory" must be a relative directory inside the project (got ${JSON.stringify(dir)})`,
    );
  }
  if (dir !== undefined) overrides.outputDirectory = dir === '.' ? '.' : dir.replace(/\/+$/, '');
  return overrides;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** The version the lockfile resolved for a direct dependency, or null when it does not say. */
export function lockedVersion(lockfile: ProjectFile | undefined, name: string): string | null {
  const text = lockfile?.text;
  if (!text) return null;
  if (lockfile.path === 'package-lock.json' || lockfile.path === 'npm-shrinkwrap.json') {
    try {
      const lock = JSON.parse(text) as { packages?: Record<string, { version?: string }>; dependencies?: Record<string, { version?: string }> };
      return lock.packages?.[`node_modules/${name}`]?.version ?? lock.dependencies?.[name]?.version ?? null;
    } catch {
      return null;
    }
  }
  const quoted = `['"]?${escapeRegExp(name)}['"]?`;
  if (lockfile.path === 'pnpm-lock.yaml') {
    // importers: '.': dependencies: <name>: {specifier, version} (lockfile v6 and v9).
    const match = new RegExp(`\\n\\s+${quoted}:\\n\\s+specifier: [^\\n]*\\n\\s+version: ['"]?([0-9][^\\s('"]*)`).exec(text);
    return match?.[1] ?? null;
  }
  if (lockfile.path === 'yarn.lock') {
    // classic: `name@^1.0.0:` then `  version "1.2.3"`; berry: `"name@npm:^1.0.0":` then `  version: 1.2.3`.
    const match = new RegExp(`(?:^|\\n)"?${escapeRegExp(name)}@[^\\n]*:\\n\\s+version:? "?([0-9][^"\\n]*)"?`).exec(text);
    return match?.[1] ?? null;
  }
  return null;
}
