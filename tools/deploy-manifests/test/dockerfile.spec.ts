import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../src/paths.js';
import { renderKustomization } from '../src/manifest.js';
import { podSpecOf } from '../src/pod-security.js';

const dockerfile = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');
const stages = dockerfile.split(/^FROM /m).slice(1);
const runtime = stages.at(-1)!;
const rootPackage = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { packageManager: string };

describe('Dockerfile', () => {
  it('builds on node 20 bookworm-slim with the pinned pnpm from the frozen lockfile', () => {
    expect(stages.map((s) => s.split(/\s/)[0])).toEqual(['node:20-bookworm-slim', 'node:20-bookworm-slim']);
    expect(dockerfile).toContain(`npm install -g ${rootPackage.packageManager}`);
    expect(dockerfile).toMatch(/pnpm install --frozen-lockfile/);
    expect(dockerfile).toMatch(/pnpm build/);
    expect(dockerfile).toMatch(/pnpm prune --prod/);
  });

  it('ships bubblewrap and passt (the build sandbox) and runs as the non-root user the pods expect', () => {
    expect(runtime).toMatch(/apt-get install[^\n]*bubblewrap/);
    expect(runtime).toMatch(/apt-get install[^\n]*passt/);
    const user = /^USER (\d+):(\d+)$/m.exec(runtime);
    expect(user).not.toBeNull();
    const pod = podSpecOf(renderKustomization(join(REPO_ROOT, 'k8s/base')).find((o) => o.kind === 'Deployment')!)!;
    expect(pod.securityContext?.runAsUser).toBe(Number(user![1]));
  });

  it('keeps dependencies, build output, local state and git data out of the build context', () => {
    const ignored = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8').split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['**/node_modules', '**/dist', '.git', '.slipway', '.nx']));
  });
});
