import { EventEmitter } from 'node:events';
import { createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiException } from '@slipway/service-kit';
import { FollowSlots } from './follow-slots.js';

/** A response stand-in: `close()` is what the client going away (or the answer ending) looks like. */
class FakeResponse extends EventEmitter {
  closed = false;
  close(): void {
    this.closed = true;
    this.emit('close');
  }
}

const refusal = (fn: () => unknown): ApiException => {
  try {
    fn();
  } catch (error) {
    return error as ApiException;
  }
  throw new Error('expected a refusal');
};

describe('FollowSlots', () => {
  it('holds at most LOG_FOLLOWS_PER_APPLICATION per application, refuses the next with 429 rate_limited, and takes one again after a close', () => {
    const slots = new FollowSlots({ LOG_FOLLOWS_PER_APPLICATION: 3 });
    const open = [new FakeResponse(), new FakeResponse(), new FakeResponse()];
    for (const res of open) slots.hold('app-a', res);
    expect(slots.count('app-a')).toBe(3);

    const extra = new FakeResponse();
    const error = refusal(() => slots.hold('app-a', extra));
    expect(error).toBeInstanceOf(ApiException);
    expect(error).toMatchObject({ code: 'rate_limited', status: 429, extras: { retryAfterSeconds: 5 }, headers: { 'Retry-After': '5' } });
    expect(error.message).toContain('LOG_FOLLOWS_PER_APPLICATION=3');
    // The refused one holds nothing: its close gives nothing back.
    expect(extra.listenerCount('close')).toBe(0);
    extra.close();
    expect(slots.count('app-a')).toBe(3);

    // Another application has its own slots.
    slots.hold('app-b', new FakeResponse());
    expect(slots.count('app-b')).toBe(1);

    open[0]!.close();
    expect(slots.count('app-a')).toBe(2);
    slots.hold('app-a', new FakeResponse());
    expect(slots.count('app-a')).toBe(3);
  });

  it('gives a slot back exactly once, however often its response reports closing', () => {
    const slots = new FollowSlots({ LOG_FOLLOWS_PER_APPLICATION: 5 });
    const first = new FakeResponse();
    slots.hold('app', first);
    slots.hold('app', new FakeResponse());
    first.close();
    first.close();
    first.emit('close');
    expect(slots.count('app')).toBe(1);

    const release = slots.take('app');
    expect(slots.count('app')).toBe(2);
    release();
    release();
    expect(slots.count('app')).toBe(1);
  });

  it('gives the slot back at once when the response had already closed (the client went while the route was checking)', () => {
    const slots = new FollowSlots({ LOG_FOLLOWS_PER_APPLICATION: 1 });
    const gone = new FakeResponse();
    gone.close();
    slots.hold('app', gone);
    expect(slots.count('app')).toBe(0);
    slots.hold('app', new FakeResponse());
    expect(slots.count('app')).toBe(1);
  });

  it("is released by a real ServerResponse's close: after the answer ends, and when the client goes mid-stream", async () => {
    const slots = new FollowSlots({ LOG_FOLLOWS_PER_APPLICATION: 2 });
    const held: ServerResponse[] = [];
    const server = createServer((req, res) => {
      slots.hold('app', res);
      held.push(res);
      if (req.url === '/answer') res.end('done');
      else res.writeHead(200).write('open\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const within = <T>(promise: Promise<T>, what: string) =>
      Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: not within 5 s`)), 5000).unref())]);
    try {
      await within(
        new Promise<void>((resolve, reject) =>
          request(`http://127.0.0.1:${port}/answer`, (res) => res.resume().on('end', resolve))
            .on('error', reject)
            .end(),
        ),
        'answer',
      );
      await within(new Promise<void>((resolve) => (held[0]!.closed ? resolve() : held[0]!.once('close', resolve))), 'close after the answer');
      expect(slots.count('app')).toBe(0);

      const client = request(`http://127.0.0.1:${port}/stream`);
      client.on('error', () => undefined);
      await within(new Promise<void>((resolve) => client.on('response', (res) => res.once('data', () => resolve())).end()), 'stream open');
      expect(slots.count('app')).toBe(1);
      client.destroy();
      await within(new Promise<void>((resolve) => (held[1]!.closed ? resolve() : held[1]!.once('close', resolve))), 'close after the client went');
      expect(slots.count('app')).toBe(0);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
