import { request as httpRequest } from 'node:http';
import { randomBytes } from 'node:crypto';
import { tarHeader } from './hostile-archives.js';

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

/**
 * A plain node:http request that keeps the response even when the server answers (and closes)
 * before the client has finished sending — which is what a cut-off upload looks like.
 */
export function send(
  url: string,
  options: {
    method?: string;
    headers?: Record<string, string>;
    body?: Buffer | AsyncIterable<Buffer>;
    /** A loopback address to connect from (a fresh connection each time). */ localAddress?: string;
  } = {},
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const from = options.localAddress ? { localAddress: options.localAddress, agent: false as const } : {};
    const req = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers, ...from });
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode!, headers: res.headers, text, json });
      });
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    const body = options.body;
    if (!body) return req.end();
    if (Buffer.isBuffer(body)) return req.end(body);
    void (async () => {
      try {
        for await (const chunk of body) {
          if (answered || req.destroyed) break;
          if (!req.write(chunk)) await new Promise<void>((r) => (req.once('drain', r), req.once('close', r)));
        }
        if (!req.destroyed) req.end();
      } catch {
        /* the server cut the upload off; the response (if any) is what counts */
      }
    })();
  });
}

/** An answer, or the server having cut the upload off before its answer could be read. */
export interface RefusableResult extends HttpResult {
  /** `EPIPE` / `ECONNRESET`: the connection closed under the client's write (status is 0). */
  cutOff?: string;
}

/**
 * send() for uploads the server may refuse mid-body. Cutting an upload off is what the gateway
 * does on purpose (`Connection: close`), so the client's write can fail with EPIPE or
 * ECONNRESET before the answer is read: that is a refusal too, reported as `cutOff`. Any other
 * failure still throws.
 */
export async function sendRefusable(url: string, options: Parameters<typeof send>[1] = {}): Promise<RefusableResult> {
  try {
    return await send(url, options);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EPIPE' || code === 'ECONNRESET') return { status: 0, headers: {}, text: '', json: undefined, cutOff: code };
    throw error;
  }
}

/** The multipart head and tail around one `archive` part whose bytes the caller streams. */
export function archiveEnvelope(filename = 'source.bin'): { head: Buffer; tail: Buffer; contentType: string } {
  const { body, contentType } = multipart([{ name: 'archive', filename, content: Buffer.alloc(0) }]);
  const end = body.indexOf('\r\n\r\n') + 4;
  return { head: body.subarray(0, end), tail: body.subarray(end), contentType };
}

/**
 * An archive upload that stays in progress: the multipart head and a tar header declaring
 * 1 MiB, then one byte every 300 ms (never quiet long enough to be dropped) until stop(),
 * when the client goes away. `answered`: the status, or 0 if the connection just closed.
 */
export function holdUpload(url: string, key: string): { stop(): void; answered: Promise<number>; closed: Promise<void> } {
  const { head, contentType } = archiveEnvelope();
  const req = httpRequest(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': contentType, 'transfer-encoding': 'chunked' } });
  const answered = new Promise<number>((resolve) => {
    req.on('response', (res) => (res.resume(), resolve(res.statusCode!)));
    req.on('error', () => resolve(0));
    req.on('close', () => resolve(0));
  });
  const closed = new Promise<void>((resolve) => req.on('close', () => resolve()));
  const header = tarHeader({ name: 'big.bin', type: '0', size: 1024 * 1024 });
  req.write(Buffer.concat([head, header]));
  const drip = setInterval(() => req.write(Buffer.alloc(1, 7)), 300);
  void closed.then(() => clearInterval(drip));
  return { stop: () => (clearInterval(drip), req.destroy()), answered, closed };
}

export type Part = { name: string; value: string } | { name: string; filename: string; content: Buffer };

/** A multipart/form-data body built by hand, so tests control every field and byte. */
export function multipart(parts: Part[]): { body: Buffer; contentType: string } {
  const boundary = `----slipway${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    if ('value' in part) {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`));
    } else {
      chunks.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
        ),
      );
      chunks.push(part.content, Buffer.from('\r\n'));
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** files + paths form, in the same order. */
export function filesForm(files: Record<string, string | Buffer>): Part[] {
  const parts: Part[] = [];
  for (const [path, content] of Object.entries(files)) {
    parts.push({ name: 'paths', value: path });
    parts.push({ name: 'files', filename: path.split('/').pop()!, content: Buffer.isBuffer(content) ? content : Buffer.from(content) });
  }
  return parts;
}
