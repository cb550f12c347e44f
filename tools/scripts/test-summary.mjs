// Adds up jest's "Tests: …" lines from one or more logs and prints one closing line: `N passed, N failed`.
import { readFileSync } from 'node:fs';

const text = process.argv
  .slice(2)
  .map((file) => readFileSync(file, 'utf8'))
  .join('\n')
  .replace(/\x1b\[[0-9;]*m/g, '');
let passed = 0;
let failed = 0;
let skipped = 0;
for (const line of text.split('\n')) {
  const match = /^Tests:\s+(.*)$/.exec(line.trim());
  if (!match) continue;
  for (const part of match[1].split(',')) {
    const [, n, what] = /(\d+)\s+(\w+)/.exec(part.trim()) ?? [];
    if (what === 'passed') passed += Number(n);
    if (what === 'failed') failed += Number(n);
    if (what === 'skipped' || what === 'todo') skipped += Number(n);
  }
}
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
