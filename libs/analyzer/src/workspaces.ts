import { checkRootDirectory } from '@slipway/contract';
import { parsePackageJson, type PackageJson } from './project-facts.js';
import { AnalyzeError, type ProjectFile } from './types.js';

/** A package of a workspace (monorepo): its directory and package.json. */
export interface WorkspacePackage {
  dir: string;
  pkg: PackageJson;
}

/** A monorepo's root: how it declares its packages, the task runner it uses, and the packages found. */
export interface Workspace {
  /** Where the package globs come from (`pnpm-workspace.yaml`, `package.json workspaces`). */
  declaredIn: string;
  patterns: string[];
  /** Turborepo (`turbo.json`) or Nx (`nx.json`) at the root, or none. */
  tool: 'turbo' | 'nx' | null;
  packages: WorkspacePackage[];
}

/** `packages:` of pnpm-workspace.yaml: the `- 'glob'` items under it (the file's only list that matters here). */
function pnpmPatterns(text: string): string[] {
  const out: string[] = [];
  let inPackages = false;
  for (const raw of text.split(/\r?\n/).slice(0, 500)) {
    const line = raw.replace(/\s+#.*$/, '');
    if (/^packages\s*:/.test(line)) {
      inPackages = true;
      const inline = /\[(.*)\]/.exec(line)?.[1];
      if (inline)
        out.push(
          ...inline
            .split(',')
            .map((s) => s.trim().replace(/^['"]|['"]$/g, ''))
            .filter(Boolean),
        );
      continue;
    }
    if (inPackages && /^\S/.test(line)) inPackages = false;
    const item = inPackages ? /^\s+-\s+['"]?([^'"]+?)['"]?\s*$/.exec(line) : null;
    if (item) out.push(item[1]!);
  }
  return out;
}

/** `workspaces` of package.json: an array (npm, Yarn, Bun) or `{ packages: [...] }` (Yarn classic). */
function packageJsonPatterns(pkg: PackageJson & { workspaces?: unknown }): string[] {
  const field = pkg.workspaces;
  const list = Array.isArray(field)
    ? field
    : field && typeof field === 'object' && Array.isArray((field as { packages?: unknown }).packages)
      ? (field as { packages: unknown[] }).packages
      : [];
  return list.filter((item): item is string => typeof item === 'string' && item.trim() !== '').map((item) => item.trim());
}

/** A workspace glob as a directory matcher: `*` one segment, `**` any number of them. */
function globToRegExp(glob: string): RegExp {
  const parts = glob.replace(/^\.\//, '').replace(/\/+$/, '').split('/');
  const body = parts
    .map((part) =>
      part === '**'
        ? '.*'
        : part
            .split('*')
            .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
            .join('[^/]*'),
    )
    .join('/');
  return new RegExp(`^${body.replace(/\/\.\*$/, '(/.*)?').replace(/^\.\*\//, '(.*/)?')}$`);
}

/** The workspace declared at the project's top level, or null when it is not a monorepo root. */
export function readWorkspace(files: ProjectFile[]): Workspace | null {
  const rootPkg = parsePackageJson(files.find((f) => f.path === 'package.json'));
  const pnpmFile = files.find((f) => f.path === 'pnpm-workspace.yaml');
  const patterns = pnpmFile ? pnpmPatterns(pnpmFile.text ?? '') : rootPkg ? packageJsonPatterns(rootPkg) : [];
  if (patterns.length === 0) return null;
  const include = patterns.filter((p) => !p.startsWith('!')).map(globToRegExp);
  const exclude = patterns.filter((p) => p.startsWith('!')).map((p) => globToRegExp(p.slice(1)));
  const packages: WorkspacePackage[] = [];
  for (const file of files) {
    if (!file.path.endsWith('/package.json') || /(^|\/)node_modules\//.test(file.path)) continue;
    const dir = file.path.slice(0, -'/package.json'.length);
    if (!include.some((re) => re.test(dir)) || exclude.some((re) => re.test(dir))) continue;
    try {
      const pkg = parsePackageJson(file);
      if (pkg) packages.push({ dir, pkg });
    } catch {
      // A broken package.json of another package does not stop the chosen one from deploying.
    }
  }
  packages.sort((a, b) => a.dir.localeCompare(b.dir));
  const paths = new Set(files.map((f) => f.path));
  return {
    declaredIn: pnpmFile ? 'pnpm-workspace.yaml' : 'package.json "workspaces"',
    patterns,
    tool: paths.has('turbo.json') ? 'turbo' : paths.has('nx.json') ? 'nx' : null,
    packages,
  };
}

/**
 * The workspace packages `dir`'s package depends on (through `dependencies` or `devDependencies`
 * naming another package of the workspace), dependencies first, `dir` itself excluded.
 */
export function internalDependencies(workspace: Workspace, dir: string): WorkspacePackage[] {
  const byName = new Map(workspace.packages.filter((p) => p.pkg.name).map((p) => [p.pkg.name!, p]));
  const ordered: WorkspacePackage[] = [];
  const seen = new Set<string>([dir]);
  const visit = (pkg: PackageJson) => {
    for (const name of Object.keys({ ...pkg.dependencies, ...pkg.devDependencies })) {
      const dep = byName.get(name);
      if (!dep || seen.has(dep.dir)) continue;
      seen.add(dep.dir);
      visit(dep.pkg);
      ordered.push(dep);
    }
  };
  const self = workspace.packages.find((p) => p.dir === dir);
  if (self) visit(self.pkg);
  return ordered;
}

/**
 * Normalises a `rootDirectory` from slipway.json or the deploy's field (libs/contract's rule, the
 * one the gateway and the CLI apply; `.` or `./` means the top level) or refuses it.
 */
export function normaliseRootDirectory(value: string, source: string): string | null {
  const trimmed = value.trim().replace(/^\.\/+/, '');
  if (trimmed === '' || trimmed === '.') return null;
  const checked = checkRootDirectory(trimmed);
  if (!checked.ok)
    throw new AnalyzeError('root_directory_invalid', `${source} ${checked.problem} (it must be a relative directory inside the project, e.g. "apps/web")`);
  return checked.value;
}

/** The files under `dir`, with paths relative to it. */
export function filesUnder(files: ProjectFile[], dir: string): ProjectFile[] {
  const prefix = `${dir}/`;
  return files.filter((f) => f.path.startsWith(prefix)).map((f) => ({ ...f, path: f.path.slice(prefix.length) }));
}

/**
 * Each package's files, paths relative to it, in one pass over the upload (each file looked up by
 * its ancestors): a crafted workspace of thousands of packages costs files × depth, not files ×
 * packages, on the worker's event loop.
 */
export function filesByPackage(files: ProjectFile[], dirs: string[]): Map<string, ProjectFile[]> {
  const out = new Map<string, ProjectFile[]>(dirs.map((dir) => [dir, []]));
  for (const file of files) {
    for (let cut = file.path.lastIndexOf('/'); cut > 0; cut = file.path.lastIndexOf('/', cut - 1)) {
      out.get(file.path.slice(0, cut))?.push({ ...file, path: file.path.slice(cut + 1) });
    }
  }
  return out;
}
