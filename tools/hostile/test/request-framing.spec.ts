/**
 * Issue 29, request framing at the edge (RFC 9112 §6), from a visitor's position: raw
 * connections to the edge's public port with an application's Host, against the platform as
 * `pnpm start` runs it (the nginx data plane) and with EDGE_DATA_PLANE=node (the Node edge alone).
 * The tenant's app (`fixtures/framing-echo`) answers, per request, the byte count and SHA-256 of
 * the body it read and the framing headers it got, and keeps every request and every parse error
 * (`GET /_seen`). Checks: a 256 KiB body sent in 8 packets with 300 ms pauses, chunked and with
 * Content-Length, arrives whole and the connection's next request is answered; a static release
 * reads such a body to its end too; every ambiguous framing is refused at the edge and never
 * reaches the app; a bare LF is refused or re-framed, never passed on; nginx's workers are not root.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expectNone } from './support/evidence.js';
import { HOSTILE_FIXTURES } from './support/host.js';
import { HostilePlatform, type Account, type Task } from './support/platform.js';
import { chunk, exchange, type RawReply } from '@slipway/testing';

const BODY_BYTES = 256 * 1024;
const PACKETS = 8;
const PAUSE_MS = 300;

interface Received {
  method: string;
  url: string;
  bytes: number;
  sha256: string;
  transferEncoding: string | null;
  contentLength: string | null;
}

interface Seen {
  /** Paths of the requests whose head reached the app. */
  started: string[];
  /** Requests the app read to their end. */
  seen: Received[];
  parseErrors: string[];
}

/** Requests whose framing two parsers could read differently: refused with 400 (501 for a transfer coding the edge does not implement, RFC 9112 §6.1). */
function ambiguous(host: string): Record<string, { request: string; refused: number[] }> {
  const h = `Host: ${host}\r\nConnection: close\r\n`;
  const bad = (request: string) => ({ request, refused: [400] });
  return {
    'Content-Length and Transfer-Encoding': bad(
      `POST /ambiguous/cl-te HTTP/1.1\r\n${h}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
    ),
    'Transfer-Encoding and Content-Length': bad(
      `POST /ambiguous/te-cl HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\nContent-Length: 11\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
    ),
    'Transfer-Encoding twice': bad(
      `POST /ambiguous/te-te HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
    ),
    'Transfer-Encoding in HTTP/1.0': bad(`POST /ambiguous/te-http10 HTTP/1.0\r\n${h}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`),
    'space before the colon': bad(`POST /ambiguous/te-space HTTP/1.1\r\n${h}Transfer-Encoding : chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`),
    'Content-Length twice, different': bad(`POST /ambiguous/cl-cl HTTP/1.1\r\n${h}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!`),
    'Content-Length list': bad(`POST /ambiguous/cl-list HTTP/1.1\r\n${h}Content-Length: 5, 5\r\n\r\nhello`),
    'Content-Length with a sign': bad(`POST /ambiguous/cl-sign HTTP/1.1\r\n${h}Content-Length: +5\r\n\r\nhello`),
    'obsolete line folding hiding Transfer-Encoding': bad(
      `POST /ambiguous/fold-sp HTTP/1.1\r\n${h}X-Pad: 1\r\n Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\nhello`,
    ),
    'obsolete line folding of Transfer-Encoding': bad(
      `POST /ambiguous/fold-tab HTTP/1.1\r\n${h}Transfer-Encoding:\r\n\tchunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
    ),
    'bare CR': bad(`POST /ambiguous/bare-cr HTTP/1.1\r\n${h}X-Pad: 1\rContent-Length: 5\r\n\r\nhello`),
    'chunk size not hex': bad(`POST /ambiguous/chunk-zz HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n`),
    'chunk size negative': bad(`POST /ambiguous/chunk-neg HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n`),
    'chunk size 0x': bad(`POST /ambiguous/chunk-0x HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n`),
    'chunk size overflowing 64 bits': bad(
      `POST /ambiguous/chunk-huge HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\n\r\n1000000000000000000005\r\nhello\r\n0\r\n\r\n`,
    ),
    'chunk shorter than its size': bad(`POST /ambiguous/chunk-short HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n0\r\n\r\n`),
    'unknown coding gzip, chunked': {
      request: `POST /ambiguous/te-gzip HTTP/1.1\r\n${h}Transfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
      refused: [400, 501],
    },
    'unknown coding identity': {
      request: `POST /ambiguous/te-identity HTTP/1.1\r\n${h}Transfer-Encoding: identity\r\nContent-Length: 5\r\n\r\nhello`,
      refused: [400, 501],
    },
  };
}

/** Bare LF as a line end (RFC 9112 §2.2): the Node edge refuses it; nginx 1.22 reads it as a line end (the RFC's MAY) and re-frames what it sends on. */
function bareLf(host: string): Record<string, string> {
  return {
    'request line and fields': `POST /bare-lf/head HTTP/1.1\nHost: ${host}\nContent-Length: 5\nConnection: close\n\nhello`,
    'one field': `POST /bare-lf/field HTTP/1.1\r\nHost: ${host}\r\nX-Pad: 1\nContent-Length: 5\r\nConnection: close\r\n\r\nhello`,
    'chunk lines': `POST /bare-lf/chunks HTTP/1.1\r\nHost: ${host}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\nhello\n0\n\n`,
  };
}

function succeeded(task: Task, what: string): void {
  if (task.status !== 'succeeded')
    throw new Error(`${what} did not deploy: ${JSON.stringify(task.error)} ${JSON.stringify(task.steps?.map((s) => [s.name, s.status]))}`);
}

/** `pieces` of a body, each its own packet. */
function split(body: Buffer, pieces: number): Buffer[] {
  const size = Math.ceil(body.length / pieces);
  return Array.from({ length: pieces }, (_, i) => body.subarray(i * size, (i + 1) * size));
}

function parsed(reply: RawReply | undefined): Received | undefined {
  try {
    return reply ? (JSON.parse(reply.body) as Received) : undefined;
  } catch {
    return undefined;
  }
}

/** nginx's worker processes under this platform's master (found by its config path), with their ids and capabilities. */
async function nginxWorkers(home: string): Promise<{ pid: number; uid: string; gid: string; capEff: string }[]> {
  const masters = new Set<number>();
  const all: { pid: number; ppid: number; title: string }[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const title = (await readFile(`/proc/${entry}/cmdline`, 'latin1').catch(() => '')).replace(/\0+$/, '').replace(/\0/g, ' ');
    const stat = await readFile(`/proc/${entry}/stat`, 'latin1').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (title.startsWith('nginx: master process') && title.includes(home)) masters.add(Number(entry));
    all.push({ pid: Number(entry), ppid, title });
  }
  const workers = all.filter((p) => masters.has(p.ppid) && p.title.startsWith('nginx: worker process'));
  return Promise.all(
    workers.map(async ({ pid }) => {
      const status = await readFile(`/proc/${pid}/status`, 'utf8');
      const line = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'm').exec(status)?.[1]?.trim() ?? '';
      return { pid, uid: line('Uid'), gid: line('Gid'), capEff: line('CapEff') };
    }),
  );
}

describe.each([['nginx'], ['node']])('request framing at the edge (%s data plane)', (plane) => {
  let platform: HostilePlatform | undefined;
  let tenant: Account;
  let site: Account;
  let host: string;
  let staticHost: string;
  const seen = async (): Promise<Seen> => JSON.parse((await platform!.viaEdge(tenant.slug, '/_seen', 10_000)).body) as Seen;

  beforeAll(async () => {
    platform = await HostilePlatform.start(`framing-${plane}`, plane === 'node' ? { env: { EDGE_DATA_PLANE: 'node' } } : {});
    tenant = await platform.bootstrap(`framing-${plane}@hostile.example`, `Framing ${plane}`);
    site = await platform.bootstrap(`framing-static-${plane}@hostile.example`, `Framing static ${plane}`);
    succeeded(await platform.deploy(tenant, join(HOSTILE_FIXTURES, 'framing-echo')), 'the echo app');
    succeeded(await platform.deploy(site, join(HOSTILE_FIXTURES, 'static-site')), 'the static site');
    host = `${tenant.slug}.localhost:${platform.ports.edge}`;
    staticHost = `${site.slug}.localhost:${platform.ports.edge}`;
  }, 600_000);

  afterAll(async () => {
    await platform?.stop();
  }, 120_000);

  it('passes a body sent in several packets with pauses on whole, chunked and with Content-Length, to Node and static releases', async () => {
    const p = platform!;
    const before = (await seen()).parseErrors.length;
    const body = randomBytes(BODY_BYTES);
    const digest = createHash('sha256').update(body).digest('hex');
    const next = (to: string) => `GET /next HTTP/1.1\r\nHost: ${to}\r\nConnection: close\r\n\r\n`;
    const began = performance.now();
    const chunked = await exchange(
      p.ports.edge,
      [`POST /upload/chunked HTTP/1.1\r\nHost: ${host}\r\nTransfer-Encoding: chunked\r\n\r\n`, ...split(body, PACKETS).map(chunk), '0\r\n\r\n', next(host)],
      PAUSE_MS,
    );
    const chunkedMs = Math.round(performance.now() - began);
    const sized = await exchange(
      p.ports.edge,
      [`POST /upload/sized HTTP/1.1\r\nHost: ${host}\r\nContent-Length: ${body.length}\r\n\r\n`, ...split(body, PACKETS), next(host)],
      PAUSE_MS,
    );
    const toStatic: Record<string, number[]> = {};
    for (const method of ['POST', 'GET']) {
      const replies = await exchange(
        p.ports.edge,
        [`${method} / HTTP/1.1\r\nHost: ${staticHost}\r\nTransfer-Encoding: chunked\r\n\r\n`, ...split(body, 4).map(chunk), '0\r\n\r\n', next(staticHost)],
        PAUSE_MS,
      );
      toStatic[method] = replies.map((r) => r.status);
    }
    const app = await seen();
    app.parseErrors = app.parseErrors.slice(before);
    const figures = {
      plane,
      chunkedMs,
      chunked: chunked.map((r) => [r.status, r.body.slice(0, 300)]),
      sized: sized.map((r) => [r.status, r.body.slice(0, 300)]),
      toStatic,
      parseErrors: app.parseErrors,
    };
    process.stdout.write(
      `request-framing (${plane}): ${JSON.stringify({ ...figures, chunked: chunked.map((r) => r.status), sized: sized.map((r) => r.status) })}\n`,
    );

    const violations: string[] = [];
    for (const [what, replies, framing] of [
      ['chunked', chunked, 'chunked'],
      ['Content-Length', sized, 'length'],
    ] as const) {
      const got = parsed(replies[0]);
      if (replies[0]?.status !== 200 || !got)
        violations.push(`the ${what} upload answered ${replies[0]?.status ?? 'nothing'}: ${replies[0]?.body.slice(0, 200) ?? ''}`);
      else {
        if (got.bytes !== BODY_BYTES || got.sha256 !== digest)
          violations.push(
            `the app received ${got.bytes} of the ${BODY_BYTES} bytes of the ${what} upload${got.bytes === BODY_BYTES ? ' (different bytes)' : ''}`,
          );
        if (framing === 'chunked' && got.transferEncoding !== 'chunked' && got.contentLength !== String(BODY_BYTES))
          violations.push(
            `the chunked upload reached the app with no framing header (Transfer-Encoding ${got.transferEncoding}, Content-Length ${got.contentLength})`,
          );
        if (framing === 'length' && got.contentLength !== String(BODY_BYTES))
          violations.push(`the Content-Length upload reached the app with Content-Length ${got.contentLength}`);
      }
      if (replies[1]?.status !== 200 || parsed(replies[1])?.url !== '/next')
        violations.push(
          `the request after the ${what} upload on the same connection answered ${replies[1]?.status ?? 'nothing'} (${replies[1]?.body.slice(0, 100) ?? 'no response'})`,
        );
    }
    if (JSON.stringify(toStatic) !== JSON.stringify({ POST: [405, 404], GET: [200, 404] }))
      violations.push(
        `the static release answered ${JSON.stringify(toStatic)} to a chunked POST / GET and the next request (expected 405 then 404, 200 then 404)`,
      );
    if (app.parseErrors.length) violations.push(`the app's parser got bytes it could not read: ${app.parseErrors.slice(0, 3).join('; ')}`);
    expectNone('a request body was not passed on as sent', violations, figures);
  }, 120_000);

  it('refuses every ambiguous framing at the edge, and none of them reaches the app', async () => {
    const p = platform!;
    const before = (await seen()).parseErrors.length;
    const answers: Record<string, number> = {};
    const violations: string[] = [];
    for (const [name, { request, refused }] of Object.entries(ambiguous(host))) {
      const status = (await exchange(p.ports.edge, [request], 0))[0]?.status ?? 0;
      answers[name] = status;
      if (!refused.includes(status)) violations.push(`${name}: answered ${status || 'nothing'} (expected ${refused.join(' or ')})`);
    }
    const app = await seen();
    const reached = app.seen.filter((r) => r.url.startsWith('/ambiguous/'));
    for (const r of reached)
      violations.push(`${r.url} reached the app (${r.bytes} bytes, Transfer-Encoding ${r.transferEncoding}, Content-Length ${r.contentLength})`);
    // A body streams: the Node edge has passed the head on when a bad chunk shows up, and then cuts
    // the app's request off (the app's parser says the connection ended mid-message). Anything
    // else the app could not parse would be the client's bytes passed on.
    const errors = app.parseErrors.slice(before);
    const cutOff = errors.filter((e) => e.startsWith('HPE_INVALID_EOF_STATE'));
    const unreadable = errors.filter((e) => !e.startsWith('HPE_INVALID_EOF_STATE'));
    if (unreadable.length) violations.push(`the app's parser got bytes it could not read: ${unreadable.slice(0, 3).join('; ')}`);
    const headsOnly = app.started.filter((url) => url.startsWith('/ambiguous/') && !reached.some((r) => r.url === url));
    process.stdout.write(
      `request-framing (${plane}): ambiguous framings answered ${JSON.stringify(answers)}; heads passed on before the body turned out malformed, then cut off: ${JSON.stringify(headsOnly)} (${cutOff.length} cut off at the app's parser)\n`,
    );
    expectNone('an ambiguous request was passed on', violations, { answers, reached, headsOnly, parseErrors: errors });
  }, 120_000);

  it('never passes a bare LF on: refused, or (nginx) re-framed with CRLF before the app sees it', async () => {
    const p = platform!;
    const before = (await seen()).parseErrors.length;
    const answers: Record<string, number> = {};
    for (const [name, request] of Object.entries(bareLf(host))) answers[name] = (await exchange(p.ports.edge, [request], 0))[0]?.status ?? 0;
    const app = await seen();
    const reached = app.seen.filter((r) => r.url.startsWith('/bare-lf/'));
    process.stdout.write(`request-framing (${plane}): bare LF answered ${JSON.stringify(answers)}; reached the app: ${JSON.stringify(reached)}\n`);
    const violations: string[] = [];
    for (const [name, status] of Object.entries(answers)) {
      // The Node edge refuses; nginx answers 400 or passes on one request of its own framing: the app read it (5 bytes) without a parse error.
      if (plane === 'node' ? status !== 400 : status !== 400 && status !== 200) violations.push(`${name}: answered ${status || 'nothing'}`);
    }
    if (plane === 'node' && reached.length) violations.push(`${reached.length} bare-LF request(s) reached the app`);
    for (const r of reached) if (r.bytes !== 5) violations.push(`${r.url} reached the app with ${r.bytes} body bytes (sent 5)`);
    const errors = app.parseErrors.slice(before);
    if (errors.length) violations.push(`the app's parser got bytes it could not read: ${errors.slice(0, 3).join('; ')}`);
    expectNone('a bare LF was passed on', violations, { answers, reached, parseErrors: errors });
  }, 60_000);

  (plane === 'nginx' ? it : it.skip)(
    "runs nginx's workers as an unprivileged user",
    async () => {
      const workers = await nginxWorkers(platform!.home);
      process.stdout.write(`request-framing (nginx): workers ${JSON.stringify(workers)}\n`);
      const violations: string[] = [];
      if (!workers.length) violations.push('no nginx worker process of this platform was found');
      for (const w of workers) {
        if (w.uid.split(/\s+/).includes('0')) violations.push(`worker ${w.pid} has uid 0 (Uid: ${w.uid})`);
        if (w.gid.split(/\s+/).includes('0')) violations.push(`worker ${w.pid} has gid 0 (Gid: ${w.gid})`);
        if (!/^0+$/.test(w.capEff)) violations.push(`worker ${w.pid} has effective capabilities ${w.capEff}`);
      }
      expectNone("nginx's workers run privileged", violations, workers);
    },
    30_000,
  );
});
