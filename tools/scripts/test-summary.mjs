// Adds up jest's "Tests: …" lines from one or more logs and prints one closing line: `N passed, N failed`.
// An argument `label=path` also gets a line of its own before the total (`test:frameworks: 19 passed, 0 failed`).
// Tasks nx lists under "Failed tasks:" (a lint or typecheck that failed while every test passed, a suite that
// could not run) are named on that line too, so the closing lines alone say why a run failed.
import { readFileSync } from 'node:fs';

function count(text) {
  const totals = { passed: 0, failed: 0, skipped: 0 };
  for (const line of text.replace(/\x1b\[[0-9;]*m/g, '').split('\n')) {
    const match = /^Tests:\s+(.*)$/.exec(line.trim());
    if (!match) continue;
    for (const part of match[1].split(',')) {
      const [, n, what] = /(\d+)\s+(\w+)/.exec(part.trim()) ?? [];
      if (what === 'passed') totals.passed += Number(n);
      if (what === 'failed') totals.failed += Number(n);
      if (what === 'skipped' || what === 'todo') totals.skipped += Number(n);
    }
  }
  return totals;
}

/** Every task nx named under a "Failed tasks:" heading (one per nx invocation in the log). */
function failedTasks(text) {
  const tasks = [];
  let listing = false;
  for (const raw of text.replace(/\x1b\[[0-9;]*m/g, '').split('\n')) {
    const line = raw.trim();
    if (line === 'Failed tasks:') listing = true;
    else if (listing && /^-\s+\S/.test(line)) tasks.push(line.replace(/^-\s+/, '').split(/\s/)[0]);
    else if (line !== '') listing = false;
  }
  return tasks;
}

const line = ({ passed, failed, skipped }) => `${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`;
const total = { passed: 0, failed: 0, skipped: 0 };
for (const arg of process.argv.slice(2)) {
  const [label, file] = /^[\w:-]+=/.test(arg) ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [null, arg];
  const text = readFileSync(file, 'utf8');
  const counts = count(text);
  const failed = failedTasks(text);
  const tasks = failed.length ? `; failed tasks: ${failed.join(', ')}` : '';
  console.log(`${label ?? file}: ${line(counts)}${tasks}`);
  for (const key of Object.keys(total)) total[key] += counts[key];
}
console.log(line(total));
