#!/usr/bin/env node
// Checks every relative link in the repo's documentation: the target file or folder must exist,
// and a `#fragment` into a Markdown file must name one of its headings (GitHub's slugs).
// `node tools/scripts/check-doc-links.mjs [files…]` (default: README.md, docs/**, and the READMEs
// of apps, libs, tools, k8s and bench); prints each broken link and exits 1 when there is one.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '../..');
const markdownUnder = (dir) =>
  readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.md'))
    .map((e) => relative(root, join(e.parentPath, e.name)));
const readmes = ['apps', 'libs', 'tools'].flatMap((d) => readdirSync(join(root, d)).map((p) => `${d}/${p}/README.md`));
const files =
  process.argv.length > 2
    ? process.argv.slice(2)
    : ['README.md', 'k8s/README.md', 'bench/README.md', ...markdownUnder('docs'), ...markdownUnder('apps/auth-service/docs'), ...readmes].filter((f) =>
        existsSync(join(root, f)),
      );

const slug = (heading) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
const anchors = (file) =>
  new Set(
    readFileSync(file, 'utf8')
      .replace(/```[\s\S]*?```/g, '')
      .split('\n')
      .filter((l) => /^#{1,6} /.test(l))
      .map((l) => slug(l.replace(/^#+ /, ''))),
  );

let broken = 0;
for (const file of files) {
  const text = readFileSync(join(root, file), 'utf8')
    .replace(/```[\s\S]*?```/g, '')
    .replace(/`[^`\n]*`/g, '');
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/i.test(target)) continue;
    const [path, fragment] = target.split('#');
    const resolved = path ? resolve(root, dirname(file), decodeURIComponent(path)) : join(root, file);
    let problem = '';
    if (!existsSync(resolved)) problem = 'no such file';
    else if (fragment && statSync(resolved).isFile() && resolved.endsWith('.md') && !anchors(resolved).has(fragment)) problem = `no heading #${fragment}`;
    if (problem) {
      broken++;
      console.log(`${file}: ${target}: ${problem}`);
    }
  }
}
console.log(`${files.length} files checked, ${broken} broken link${broken === 1 ? '' : 's'}`);
process.exit(broken ? 1 : 0);
