import type { IncomingMessage, ServerResponse } from 'node:http';

/** A comment this often keeps proxies from closing an idle stream and notices a gone client. */
const KEEPALIVE_MS = 15_000;

/**
 * A server-sent events response (`text/event-stream`): `send` writes one `data:` event (JSON),
 * `closed` resolves when the client goes. Not buffered anywhere on the way: no compression, and
 * `x-accel-buffering: no` for an nginx in front.
 */
export function openEventStream(
  req: IncomingMessage,
  res: ServerResponse,
): { send: (data: unknown, event?: string) => void; closed: Promise<void>; end: () => void } {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' });
  res.flushHeaders();
  res.write(': stream open\n\n');
  req.socket.setNoDelay(true);
  const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
  const closed = new Promise<void>((resolve) =>
    res.once('close', () => {
      clearInterval(keepalive);
      resolve();
    }),
  );
  return {
    send: (data, event) => {
      if (!res.writableEnded) res.write(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
    },
    closed,
    end: () => {
      clearInterval(keepalive);
      if (!res.writableEnded) res.end();
    },
  };
}
