import { request } from 'node:http';

export interface Sample {
  at: number;
  status: number;
  body: string;
}

/**
 * Requests one application's address through the edge back to back (20 ms apart) until stopped,
 * bounded in time and count, recording each answer: what a visitor sees while releases switch.
 * Status 0: no answer (refused, reset, 5 s without a reply).
 */
export class RequestLoop {
  readonly samples: Sample[] = [];
  private stopped = false;
  private readonly done: Promise<void>;

  constructor(port: number, host: string, path = '/', maxMs = 5 * 60_000, maxRequests = 20_000) {
    this.done = (async () => {
      const end = Date.now() + maxMs;
      while (!this.stopped && Date.now() < end && this.samples.length < maxRequests) {
        const at = Date.now();
        this.samples.push({ at, ...(await one(port, host, path)) });
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
  }

  /** Answers that were not a 200 (refusals, 5xx, 404 from a half-switched route). */
  failures(): Sample[] {
    return this.samples.filter((s) => s.status !== 200);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }
}

function one(port: number, host: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host }, agent: false, timeout: 5000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', () => resolve({ status: 0, body: '' }));
    });
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}
