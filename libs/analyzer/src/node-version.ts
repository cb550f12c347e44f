import semver from 'semver';
import type { NodeVersionRequest, ProjectFile, Warning } from './types.js';

/** First meaningful line of `.nvmrc` / `.node-version` (comments and blank lines skipped). */
function firstLine(text: string | undefined): string | null {
  for (const raw of (text ?? '').split(/\r?\n/).slice(0, 20)) {
    const line = raw.replace(/#.*$/, '').trim();
    if (line) return line.slice(0, 200);
  }
  return null;
}

function enginesNode(files: ProjectFile[]): string | null {
  try {
    const pkg = JSON.parse(files.find((f) => f.path === 'package.json')?.text ?? '') as { engines?: { node?: unknown } } | null;
    const value = pkg?.engines?.node;
    return typeof value === 'string' && value.trim() ? value.trim().slice(0, 200) : null;
  } catch {
    return null;
  }
}

/**
 * Which Node.js the project asks for, and where: `.node-version`, then `.nvmrc` (a version the
 * author pins their own machine to), then `engines.node` (a range). Null: nothing declared.
 * The build worker resolves it to an exact version (libs/toolchains).
 */
export function declaredNodeVersion(files: ProjectFile[]): NodeVersionRequest | null {
  for (const source of ['.node-version', '.nvmrc'] as const) {
    const value = firstLine(files.find((f) => f.path === source)?.text);
    if (value) return { value, source };
  }
  const engines = enginesNode(files);
  return engines ? { value: engines, source: 'engines' } : null;
}

/**
 * `engine_mismatch`: `.node-version`/`.nvmrc` pins a version `engines.node` rules out (the pin
 * wins: it is what the author runs). Null when they agree, or when either is absent or unreadable
 * (`lts/*` and the like are judged by the build worker, which fails the deploy if nothing fits).
 */
export function engineMismatch(files: ProjectFile[], request: NodeVersionRequest | null): Warning | null {
  const engines = enginesNode(files);
  if (!engines || !request || request.source === 'engines') return null;
  const range = semver.validRange(engines);
  const pinned = semver.validRange(request.value.replace(/^v(?=\d)/i, ''));
  if (!range || !pinned || semver.intersects(range, pinned)) return null;
  return {
    code: 'engine_mismatch',
    path: 'package.json',
    detail: `engines.node "${engines}", ${request.source} "${request.value}"`,
    message: `package.json asks for Node ${engines}, but ${request.source} pins ${request.value}; the pin wins, so builds and the server run on a Node that engines.node rules out.`,
  };
}

/**
 * `node_end_of_life`: the project runs on a Node.js major past its end of life because what it
 * declares allows nothing newer (a range that allows a newer major resolves to it instead).
 */
export function nodeEndOfLife(version: string, request: NodeVersionRequest | null, endOfLife: Readonly<Record<number, string>>): Warning | null {
  const major = semver.major(version);
  const since = endOfLife[major];
  if (!since || !request) return null;
  const where = request.source === 'engines' ? 'package.json engines.node' : request.source;
  return {
    code: 'node_end_of_life',
    path: request.source === 'engines' ? 'package.json' : request.source,
    detail: `Node.js ${version}; ${where} "${request.value}"`,
    message: `Node.js ${major} reached its end of life on ${since} (no more security fixes), and ${where} "${request.value}" allows no newer major, so builds and the server run on Node.js ${version}. Allow a supported major (e.g. ">=${major}" or "24").`,
  };
}
