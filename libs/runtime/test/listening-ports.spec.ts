import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { listeningPorts } from '../src/sandbox/listening-ports.js';

/** A process that opens `fds` descriptors (/dev/null), then listens on a free port and prints it. */
async function listener(fds: number): Promise<{ child: ChildProcess; port: number }> {
  const code = `const fs = require('node:fs'); for (let i = 0; i < ${fds}; i++) fs.openSync('/dev/null', 'r');
    const server = require('node:net').createServer().listen(0, '127.0.0.1', () => console.log(server.address().port));`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  // The port line may come in more than one chunk: read up to its newline (seen: "NaN" from a first chunk).
  // Only the line that is a number counts (seen once: NaN from the output as a whole).
  let text = '';
  while (!/^\d+\n/m.test(text)) {
    const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
    text += chunk.toString();
  }
  return { child, port: Number(/^(\d+)\n/m.exec(text)![1]) };
}

describe('the ports a release listens on, read from /proc', () => {
  const children: ChildProcess[] = [];
  afterAll(() => children.forEach((c) => c.kill('SIGKILL')));

  it("counts its own processes' listeners only", async () => {
    const [mine, other] = [await listener(0), await listener(0)];
    children.push(mine.child, other.child);
    expect(await listeningPorts([mine.child.pid!])).toEqual([mine.port]);
  });

  it('reads a bounded number of descriptors per scan, whatever a release holds', async () => {
    // 5000 descriptors before its socket: past the 4096 one scan reads, so it is not found (its own loss).
    const flooded = await listener(5000);
    children.push(flooded.child);
    expect(await listeningPorts([flooded.child.pid!])).toEqual([]);
  });
});
