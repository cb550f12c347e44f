import { spawn, type ChildProcess } from 'node:child_process';
import { listeningPorts } from '../src/listening-ports.js';

/**
 * A process that opens `fds` descriptors (/dev/null), then listens on a free port and prints it
 * (written as is: console.log colours a number when FORCE_COLOR is set, as under nx).
 */
async function listener(fds: number, children: ChildProcess[]): Promise<{ child: ChildProcess; port: number }> {
  const code = `const fs = require('node:fs'); for (let i = 0; i < ${fds}; i++) fs.openSync('/dev/null', 'r');
    const server = require('node:net').createServer().listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  // One listener for the whole output: the port line may come in several chunks, and a chunk that
  // arrives while no 'data' listener is attached is lost (a loop of once(…, 'data') hung here).
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`no port printed within 10 s (output: ${JSON.stringify(text)})`)), 10_000);
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      text += chunk;
      const line = /^(\d+)\n/m.exec(text);
      if (!line) return;
      clearTimeout(timer);
      resolve(Number(line[1]));
    });
    child.once('exit', (exitCode) => {
      clearTimeout(timer);
      reject(new Error(`the listener exited (${exitCode}) before printing its port (output: ${JSON.stringify(text)})`));
    });
  });
  return { child, port };
}

describe('the ports a release listens on, read from /proc', () => {
  const children: ChildProcess[] = [];
  afterAll(() => children.forEach((c) => c.kill('SIGKILL')));

  it("counts its own processes' listeners only", async () => {
    const [mine, other] = [await listener(0, children), await listener(0, children)];
    expect(await listeningPorts([mine.child.pid!])).toEqual([mine.port]);
    expect(await listeningPorts([other.child.pid!])).toEqual([other.port]);
  });

  it('reads a bounded number of descriptors per scan, whatever a release holds', async () => {
    // 5000 descriptors before its socket: past the 4096 one scan reads, so it is not found (its own loss).
    const flooded = await listener(5000, children);
    expect(await listeningPorts([flooded.child.pid!])).toEqual([]);
  });
});
