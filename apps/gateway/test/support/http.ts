import { request as httpRequest } from 'node:http';
import { randomBytes } from 'node:crypto';

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
export function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: Buffer | AsyncIterable<Buffer> } = {}): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers });
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

export type Part = { name: string; value: string } | { name: string; filename: string; content: Buffer };

/** A multipart/form-data body built by hand, so tests control every field and byte. */
export function multipart(parts: Part[]): { body: Buffer; contentType: string } {
  const boundary = `----slipway${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    if ('value' in part) {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`));
    } else {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`));
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
