// ESLint rule `slipway/feature-folders`: inside one app's source root, each top-level folder is a
// feature (or a shared piece) with a public face, its `index.ts`. A file may import another folder
// only through that index (never its internals), and the folders' imports must not run in a
// circle (A imports B while B, directly or through others, imports A). Options: `{ root }`, the
// source root, absolute. Relative imports only (other projects are module-boundaries' concern).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

/** The top-level folder of `root` that holds `path`, or null for a file directly in `root` or outside it. */
function folderOf(root, path) {
  const rel = relative(root, path);
  if (rel.startsWith('..') || !rel.includes(sep)) return null;
  return rel.split(sep)[0];
}

function sourceFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(entry.name) && !/\.spec\.tsx?$/.test(entry.name)) out.push(path);
  }
  return out;
}

/** Folder → folders it imports, read from the files on disk (spec files left out). */
function folderGraph(root) {
  const graph = new Map();
  for (const file of sourceFiles(root)) {
    const from = folderOf(root, file);
    if (from === null) continue;
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(IMPORT)) {
      const to = folderOf(root, resolve(dirname(file), match[1] ?? match[2]));
      if (to === null || to === from) continue;
      if (!graph.has(from)) graph.set(from, new Set());
      graph.get(from).add(to);
    }
  }
  return graph;
}

/** A path of folders from `start` to `goal` in `graph`, or null. */
function pathBetween(graph, start, goal) {
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length) {
    const node = queue.shift();
    if (node === goal) {
      const path = [];
      for (let n = goal; n !== null; n = previous.get(n)) path.unshift(n);
      return path;
    }
    for (const next of graph.get(node) ?? []) {
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return null;
}

export default {
  meta: {
    type: 'problem',
    schema: [{ type: 'object', properties: { root: { type: 'string' } }, required: ['root'] }],
    messages: {
      internals: "'{{spec}}' reaches inside folder '{{folder}}': import '{{folder}}/index.js' (its public face) and export what is needed there.",
      circle:
        "Folder '{{from}}' imports '{{to}}', which already depends on '{{from}}' ({{path}}): move the shared piece down, or into the folder that owns it.",
    },
  },
  create(context) {
    const root = resolve(context.options[0].root);
    const file = context.filename;
    if (relative(root, file).startsWith('..')) return {};
    const own = folderOf(root, file);
    let graph;
    const check = (node) => {
      const spec = node.source?.value;
      if (typeof spec !== 'string' || !spec.startsWith('.')) return;
      const target = resolve(dirname(file), spec);
      const folder = folderOf(root, target);
      if (folder === null || folder === own) return;
      if (relative(join(root, folder), target).replace(/\.[jt]sx?$/, '') !== 'index') {
        context.report({ node, messageId: 'internals', data: { spec, folder } });
      }
      if (own === null) return;
      graph ??= folderGraph(root);
      const back = pathBetween(graph, folder, own);
      if (back) context.report({ node, messageId: 'circle', data: { from: own, to: folder, path: [own, ...back].join(' → ') } });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};
