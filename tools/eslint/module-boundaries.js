// ESLint rule `slipway/module-boundaries`: the Nx tags of each project (project.json) and the
// dependency constraints in eslint.config.js, enforced on every import. Also forbids relative
// imports that leave the project and deep imports into another project (`@slipway/x/src/...`).
// A constraint's `alsoInTests` tags are allowed in the project's test files only (`*.spec.ts`,
// anything under a `test/` folder): test-only libs stay out of runtime code, not out of tests.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const projectCache = new Map();

/** The project (root dir, name, tags) a file belongs to: nearest project.json above it. */
function projectOf(file) {
  let dir = dirname(file);
  while (dir !== dirname(dir)) {
    if (projectCache.has(dir)) return projectCache.get(dir);
    const manifest = join(dir, 'project.json');
    if (existsSync(manifest)) {
      const json = JSON.parse(readFileSync(manifest, 'utf8'));
      const project = { root: dir, name: json.name, tags: json.tags ?? [] };
      projectCache.set(dir, project);
      return project;
    }
    dir = dirname(dir);
  }
  return undefined;
}

/** A test file of its project: a spec, or anything under a `test/` folder inside the project. */
function isTestFile(project, file) {
  const rel = relative(project.root, file).split(sep);
  return /\.spec\.[cm]?[jt]sx?$/.test(rel.at(-1)) || rel.slice(0, -1).includes('test');
}

function projectByName(workspaceRoot, name) {
  for (const base of ['libs', 'apps', 'tools']) {
    const dir = join(workspaceRoot, base, name);
    if (existsSync(join(dir, 'project.json'))) return projectOf(join(dir, 'project.json'));
  }
  return undefined;
}

export default {
  meta: {
    type: 'problem',
    schema: [
      {
        type: 'object',
        properties: {
          workspaceRoot: { type: 'string' },
          depConstraints: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                sourceTag: { type: 'string' },
                onlyDependOnLibsWithTags: { type: 'array', items: { type: 'string' } },
                alsoInTests: { type: 'array', items: { type: 'string' } },
              },
            },
          },
        },
      },
    ],
    messages: {
      relativeOut: 'Relative import leaves project "{{project}}"; import the other project by its package name (@slipway/...).',
      deep: 'Deep import into "{{target}}": import from "@slipway/{{target}}" (its src/index.ts) only.',
      unknown: 'Unknown workspace project "{{target}}".',
      tags: 'Project "{{source}}" ({{sourceTags}}) may not depend on "{{target}}" ({{targetTags}}){{where}}.',
    },
  },
  create(context) {
    const { workspaceRoot, depConstraints = [] } = context.options[0] ?? {};
    const file = context.filename;
    const source = projectOf(file);
    if (!source) return {};
    const inTest = isTestFile(source, file);
    const check = (node) => {
      const spec = node.source?.value;
      if (typeof spec !== 'string') return;
      if (spec.startsWith('.')) {
        const target = resolve(dirname(file), spec);
        if (!(target + sep).startsWith(source.root + sep)) context.report({ node, messageId: 'relativeOut', data: { project: source.name } });
        return;
      }
      const match = /^@slipway\/([^/]+)(\/.*)?$/.exec(spec);
      if (!match) return;
      const [, name, rest] = match;
      if (rest) context.report({ node, messageId: 'deep', data: { target: name } });
      const target = projectByName(workspaceRoot, name);
      if (!target) {
        context.report({ node, messageId: 'unknown', data: { target: name } });
        return;
      }
      for (const constraint of depConstraints) {
        if (constraint.sourceTag !== '*' && !source.tags.includes(constraint.sourceTag)) continue;
        const allowed = [...(constraint.onlyDependOnLibsWithTags ?? ['*']), ...(inTest ? (constraint.alsoInTests ?? []) : [])];
        if (!allowed.includes('*') && !target.tags.some((t) => allowed.includes(t))) {
          context.report({
            node,
            messageId: 'tags',
            data: {
              source: source.name,
              sourceTags: source.tags.join(','),
              target: target.name,
              targetTags: target.tags.join(','),
              where: constraint.alsoInTests?.some((t) => target.tags.includes(t)) ? ' outside its tests' : '',
            },
          });
          return;
        }
      }
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};
