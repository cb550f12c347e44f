import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Container, V1Secret } from '@kubernetes/client-node';
import type { ReleaseToRun } from '../driver.js';
import { BUILD_UID, buildJobManifests, type BuildToRun } from './build-job.js';
import { APP_UID, releaseManifests } from './manifests.js';

/**
 * The generated pods' commands run for real, each container in a bubblewrap sandbox shaped like
 * its pod: the pod's uid, its emptyDirs at their mount paths, a read-only system, the container's
 * environment resolved from the generated Secrets and nothing else; against a real HTTP server
 * standing in for blob storage (presigned URLs) and the edge (artifact download).
 */

interface Blobs {
  server: Server;
  url: string;
  uploads: Map<string, Buffer>;
  downloads: string[];
}

async function blobServer(files: Record<string, Buffer>, token?: string): Promise<Blobs> {
  const uploads = new Map<string, Buffer>();
  const downloads: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url!.split('?')[0]!;
      if (req.method === 'PUT') {
        uploads.set(path, Buffer.concat(chunks));
        return res.end();
      }
      if (token && req.headers.authorization !== `Bearer ${token}`) return res.writeHead(401).end();
      const file = files[path];
      if (!file) return res.writeHead(404).end();
      downloads.push(path);
      res.end(file);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, uploads, downloads };
}

function tarGz(files: Record<string, string>): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'pod-src-'));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  const out = spawnSync('tar', ['-czf', '-', '-C', dir, '.']);
  rmSync(dir, { recursive: true, force: true });
  return out.stdout;
}

function untar(archive: Buffer): Map<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'pod-out-'));
  spawnSync('tar', ['-xzf', '-', '-C', dir], { input: archive });
  const listing = spawnSync('find', ['.', '-type', 'f'], { cwd: dir, encoding: 'utf8' }).stdout.trim().split('\n');
  const files = new Map(listing.map((f) => [f.replace(/^\.\//, ''), readFileSync(join(dir, f), 'utf8')]));
  rmSync(dir, { recursive: true, force: true });
  return files;
}

/**
 * Runs one container's command as the pod would: its uid, its mounts (host dirs standing in for
 * emptyDirs), its resolved environment. Asynchronous: the HTTP server it talks to is in this process.
 */
async function runContainer(
  container: V1Container,
  uid: number,
  volumes: Record<string, string>,
  secrets: V1Secret[],
): Promise<{ status: number | null; output: string }> {
  const secretValue = (name: string, key: string) => secrets.find((s) => s.metadata!.name === name)?.stringData?.[key];
  const args = ['--unshare-all', '--share-net', '--unshare-user', '--uid', String(uid), '--gid', String(uid), '--die-with-parent'];
  args.push(
    '--ro-bind',
    '/usr',
    '/usr',
    '--symlink',
    'usr/bin',
    '/bin',
    '--symlink',
    'usr/lib',
    '/lib',
    '--symlink',
    'usr/lib64',
    '/lib64',
    '--ro-bind',
    '/etc',
    '/etc',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
  );
  for (const mount of container.volumeMounts ?? []) args.push('--bind', volumes[mount.name]!, mount.mountPath);
  args.push('--chdir', container.workingDir ?? '/', '--clearenv', '--setenv', 'PATH', '/usr/local/bin:/usr/bin:/bin');
  // As the kubelet does: envFrom first, then env (which wins on a clash).
  for (const from of container.envFrom ?? []) {
    const values = secrets.find((s) => s.metadata!.name === from.secretRef?.name)?.stringData;
    if (!values) throw new Error(`${container.name}: envFrom names an unknown source`);
    for (const [key, value] of Object.entries(values)) args.push('--setenv', `${from.prefix ?? ''}${key}`, value);
  }
  for (const env of container.env ?? []) {
    const value = env.value ?? secretValue(env.valueFrom!.secretKeyRef!.name ?? '', env.valueFrom!.secretKeyRef!.key);
    if (value === undefined) throw new Error(`${container.name}: ${env.name} resolves to nothing`);
    args.push('--setenv', env.name, value);
  }
  const child = spawn('bwrap', [...args, ...container.command!], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 20_000 });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, output }));
  });
}

function podVolumes(names: string[]): { volumes: Record<string, string>; cleanup: () => void } {
  const root = mkdtempSync(join(tmpdir(), 'pod-vol-'));
  const volumes = Object.fromEntries(names.map((n) => [n, join(root, n)]));
  for (const dir of Object.values(volumes)) mkdirSync(dir);
  return { volumes, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

describe('a build Job, run container by container', () => {
  let blobs: Blobs;
  const source = tarGz({ 'package.json': '{"name":"site"}', 'page.txt': 'hello from source\n' });
  const build = (steps: BuildToRun['steps']): BuildToRun => ({
    deploymentId: '9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f',
    applicationId: '5d0c2a8e-1b7f-4e3a-9c6d-7a1e2b3c4d5e',
    steps,
    env: { GREETING: 'bonjour' },
    sourceUrl: `${blobs.url}/sources/s.tar.gz?X-Amz-Signature=sig`,
    outputUrl: `${blobs.url}/outputs/o.tar.gz?X-Amz-Signature=sig`,
    outputDir: 'dist',
  });
  const run = async (toRun: BuildToRun) => {
    const { job, envSecret, transferSecret } = buildJobManifests(toRun, { namespace: 'slipway-builds', image: 'slipway/slipway', timeoutSeconds: 60 });
    const pod = job.spec!.template.spec!;
    const { volumes, cleanup } = podVolumes(pod.volumes!.map((v) => v.name));
    try {
      const results: { name: string; status: number | null; output: string }[] = [];
      for (const container of [...pod.initContainers!, ...pod.containers]) {
        const result = await runContainer(container, BUILD_UID, volumes, [envSecret, transferSecret]);
        results.push({ name: container.name, ...result });
        if (result.status !== 0) break;
      }
      return results;
    } finally {
      cleanup();
    }
  };

  beforeAll(async () => {
    blobs = await blobServer({ '/sources/s.tar.gz': source });
  });
  afterAll(() => blobs.server.close());
  beforeEach(() => blobs.uploads.clear());

  it('fetches the source, runs the steps in order with only their variables, and uploads the output directory', async () => {
    const results = await run(
      build([
        { name: 'install', command: 'echo installed > installed.txt' },
        { name: 'build', command: 'mkdir dist && cat page.txt installed.txt > dist/index.html && env | sort > dist/env.txt && id -u > dist/uid.txt' },
      ]),
    );
    expect(results.map((r) => [r.name, r.status])).toEqual([
      ['fetch-source', 0],
      ['install', 0],
      ['build', 0],
      ['upload-output', 0],
    ]);
    const output = untar(blobs.uploads.get('/outputs/o.tar.gz')!);
    expect(output.get('index.html')).toBe('hello from source\ninstalled\n');
    expect(output.get('uid.txt')).toBe(`${BUILD_UID}\n`);
    const seen = output
      .get('env.txt')!
      .split('\n')
      .map((line) => line.split('=')[0])
      .filter((k) => k && !['PWD', 'SHLVL', '_', 'PATH'].includes(k));
    expect(seen.sort()).toEqual(['GREETING', 'HOME']);
    expect(output.get('env.txt')).not.toContain('X-Amz-Signature');
  });

  it('fails at the failing step and uploads nothing', async () => {
    const results = await run(
      build([
        { name: 'install', command: 'exit 3' },
        { name: 'build', command: 'mkdir dist' },
      ]),
    );
    expect(results.map((r) => [r.name, r.status])).toEqual([
      ['fetch-source', 0],
      ['install', 3],
    ]);
    expect(blobs.uploads.size).toBe(0);
  });

  it('refuses an output directory that is a link (here to the system) and uploads nothing', async () => {
    const results = await run(build([{ name: 'build', command: 'ln -s /etc dist' }]));
    expect(results.at(-1)).toMatchObject({ name: 'upload-output', status: 1 });
    expect(blobs.uploads.size).toBe(0);
  });
});

describe('a release pod, fetch container', () => {
  it('downloads its artifact with its token and unpacks it into the release volume, as the application uid', async () => {
    const releaseId = '0b9f7c1e-6a43-4b8e-9d4e-2f5a3c1d7e90';
    const blobs = await blobServer({ [`/_slipway/artifacts/${releaseId}`]: tarGz({ 'server.js': 'console.log(1)' }) }, 'artifact-token');
    const release: ReleaseToRun = { releaseId, applicationId: 'a', slug: 'shop', artifactKey: 'k', startCommand: 'node server.js', env: { A: 'b' } };
    const { deployment, secret } = releaseManifests(release, {
      namespace: 'slipway-apps',
      image: 'x',
      artifactUrl: (id) => `${blobs.url}/_slipway/artifacts/${id}`,
      artifactToken: 'artifact-token',
    });
    const pod = deployment.spec!.template.spec!;
    const { volumes, cleanup } = podVolumes(pod.volumes!.map((v) => v.name));
    try {
      const fetched = await runContainer(pod.initContainers![0]!, APP_UID, volumes, [secret]);
      expect(fetched).toMatchObject({ status: 0 });
      expect(readFileSync(join(volumes['release']!, 'server.js'), 'utf8')).toBe('console.log(1)');
      expect(blobs.downloads).toEqual([`/_slipway/artifacts/${releaseId}`]);
      // The app container's command sees its variables and not the artifact token.
      const app = { ...pod.containers[0]!, command: ['sh', '-c', 'env | cut -d= -f1 | grep -vxE "PWD|SHLVL|_" | sort | tr "\\n" " "'] };
      expect((await runContainer(app, APP_UID, volumes, [secret])).output.trim()).toBe('A HOME NODE_ENV PATH PORT');
    } finally {
      cleanup();
      blobs.server.close();
    }
  });
});
