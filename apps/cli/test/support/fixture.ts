import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** What a deploy of `projectFixture()` must send, and nothing else. */
export const SENT = ['index.html', 'run.sh', 'src/app.js', 'src/keep.log', '.gitignore', '.slipwayignore', 'src/.gitignore'].sort();

/**
 * A project folder with everything the CLI must leave out: dependencies, git history, env files,
 * files ignored by .gitignore (root and nested, with a negation) and by .slipwayignore.
 */
export async function projectFixture(extra: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'slipway-cli-project-'));
  const files: Record<string, string> = {
    'index.html': '<h1>hello</h1>',
    'run.sh': '#!/bin/sh\necho hi\n',
    'src/app.js': 'console.log("app")',
    'src/keep.log': 'negated in src/.gitignore',
    'src/debug.log': 'ignored by *.log',
    'src/.gitignore': '!keep.log\ngenerated/\n',
    'src/generated/out.js': 'ignored by src/.gitignore',
    '.gitignore': '*.log\ndist/\n',
    '.slipwayignore': 'secret-notes.txt\n',
    'secret-notes.txt': 'ignored by .slipwayignore',
    'dist/bundle.js': 'ignored by .gitignore',
    'debug.log': 'ignored',
    'node_modules/left-pad/index.js': 'module.exports = 1',
    '.git/HEAD': 'ref: refs/heads/main',
    '.env': 'DATABASE_PASSWORD=hunter2',
    '.env.production': 'API_TOKEN=prod',
    ...extra,
  };
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content, { mode: path.endsWith('.sh') ? 0o755 : 0o644 });
  }
  return dir;
}
