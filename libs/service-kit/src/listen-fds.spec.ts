import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { holdListeningSocket, inheritedListenFds, listenFdsValue, type HeldSocket } from './listen-fds.js';

/** A plain HTTP server on the inherited descriptor 3, answering its pid. */
const SERVER = `require('node:http').createServer((q, r) => r.end(String(process.pid))).listen({ fd: 3 }, () => process.stdout.write('listening\\n'));`;

function startServer(held: HeldSocket): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit', held.fd] });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
}

function get(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent: false, headers: { connection: 'close' }, timeout: 5000 }, (res) => {
      let body = '';
      res
        .setEncoding('utf8')
        .on('data', (c: string) => (body += c))
        .on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

describe('holdListeningSocket', () => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
  });

  it('holds the port without accepting: a request made before any server runs waits in the backlog and is answered by the first one', async () => {
    const held = await holdListeningSocket(0, '127.0.0.1');
    try {
      const early = get(held.port);
      await new Promise((r) => setTimeout(r, 300));
      const server = await startServer(held);
      children.push(server);
      expect(await early).toBe(String(server.pid));
    } finally {
      held.close();
    }
  });

  it('two processes on one socket: kill -9 of either costs no request, and a replacement takes its place', async () => {
    const held = await holdListeningSocket(0, '127.0.0.1');
    try {
      const [a, b] = [await startServer(held), await startServer(held)];
      children.push(a!, b!);
      const answered = new Map<string, number>();
      let failed = 0;
      for (let i = 0; i < 300; i++) {
        if (i === 100) a!.kill('SIGKILL');
        if (i === 150) children.push(await startServer(held));
        if (i === 200) b!.kill('SIGKILL');
        try {
          const pid = await get(held.port);
          answered.set(pid, (answered.get(pid) ?? 0) + 1);
        } catch {
          failed++;
        }
      }
      expect(failed).toBe(0);
      expect(answered.size).toBeGreaterThanOrEqual(2);
    } finally {
      held.close();
    }
  });

  it('says so when the port is taken', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as { port: number }).port;
    try {
      await expect(holdListeningSocket(port, '127.0.0.1')).rejects.toThrow(`port ${port} on 127.0.0.1 is already in use`);
    } finally {
      taken.close();
    }
  });

  it('names inherited descriptors by role', () => {
    expect(listenFdsValue(['http', 'tls'])).toBe('http=3,tls=4');
    expect([...inheritedListenFds({ SLIPWAY_LISTEN_FDS: 'http=3,tls=4' })]).toEqual([
      ['http', 3],
      ['tls', 4],
    ]);
    expect(inheritedListenFds({}).size).toBe(0);
  });
});
