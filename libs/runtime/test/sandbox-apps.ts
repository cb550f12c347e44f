import { execFile } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { BlobStore } from '@slipway/blob';

const run = promisify(execFile);

/**
 * What the sandbox specs' apps share (their source is a string: the app runs in the sandbox, not
 * in jest): `connect(host, port)` resolves `open`, the error's code, or `timeout` (1.5 s).
 */
export const CONNECT_HELPER = `
const net = require('node:net');
const connect = (host, port) => new Promise((resolve) => {
  const s = net.connect({ host, port, timeout: 1500 });
  s.on('connect', () => { s.destroy(); resolve('open'); });
  s.on('error', (e) => resolve(e.code));
  s.on('timeout', () => { s.destroy(); resolve('timeout'); });
});
`;

/** A release artifact of one `server.js` (`npm start` runs it), stored under `key`. */
export async function appArtifact(dir: string, blobs: BlobStore, key: string, source: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'server.js'), source);
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'probe', private: true, scripts: { start: 'node server.js' } }));
  const tar = `${dir}.tar.gz`;
  await run('tar', ['-czf', tar, '-C', dir, 'server.js', 'package.json']);
  await blobs.put(key, createReadStream(tar));
}

/** A platform-like listener on the host (`host`, any port) that answers every connection with a secret. */
export function secretListener(host: string): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer((socket) => socket.end('platform secret\n'));
    server.listen(0, host, () => resolve(server));
  });
}
