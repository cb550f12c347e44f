// A small HTTP/1.1 load generator with microsecond latencies (autocannon's histogram keeps whole
// milliseconds, too coarse for a sub-millisecond overhead). Keep-alive connections, one request
// in flight per connection (no pipelining), `GET path` with a Host header (and `headers`, if given).
//   closed loop (rate undefined): each connection sends its next request as soon as the answer is
//     complete; at saturation the latency is mostly queueing (Little's law: p50 ≈ connections / rate).
//   fixed offered load (rate = requests/s over all connections): a 1 ms ticker releases the
//     requests due so far to idle connections; a request due while every connection is busy is
//     sent as soon as one frees and counted as `late` (then the rate was not sustained: read the
//     figures with that in mind). Latency is measured from the moment the request is written.
import { connect } from 'node:net';

const CRLF2 = Buffer.from('\r\n\r\n');
const CHUNKED_END = Buffer.from('0\r\n\r\n');

function percentile(sorted, p) {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/**
 * @returns {Promise<{requests:number, rps:number, p50:number, p90:number, p99:number, max:number, non2xx:number, errors:number, late:number, offered?:number}>}
 *   latencies in milliseconds (fractional, µs resolution); `rps` = completed requests / duration.
 */
export function load({ port, host = '127.0.0.1', hostHeader, path = '/', connections = 50, durationMs = 5000, rate, headers = {} }) {
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const request = Buffer.from(`GET ${path} HTTP/1.1\r\nHost: ${hostHeader ?? `${host}:${port}`}\r\n${extra}\r\n`, 'latin1');
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  let non2xx = 0;
  let errors = 0;
  let late = 0;
  let issued = 0;
  let backlog = 0;
  let stopping = false;
  const idle = [];
  const conns = [];
  const record = (ms) => {
    if (count === latencies.length) {
      const bigger = new Float64Array(latencies.length * 2);
      bigger.set(latencies);
      latencies = bigger;
    }
    latencies[count++] = ms;
  };

  return new Promise((resolve, reject) => {
    let started = 0;
    let t0 = 0n;
    let ticker;
    const send = (c) => {
      c.sentAt = process.hrtime.bigint();
      c.busy = true;
      c.socket.write(request);
    };
    const next = (c) => {
      c.busy = false;
      if (stopping) return;
      if (rate === undefined) return send(c);
      if (backlog > 0) {
        backlog -= 1;
        return send(c);
      }
      idle.push(c);
    };
    const tick = () => {
      const due = Math.floor((rate * Number(process.hrtime.bigint() - t0)) / 1e9) - issued;
      for (let i = 0; i < due; i++) {
        issued += 1;
        const c = idle.pop();
        if (c) send(c);
        else {
          backlog += 1;
          late += 1;
        }
      }
    };
    const finish = () => {
      stopping = true;
      clearInterval(ticker);
      const elapsed = Number(process.hrtime.bigint() - t0) / 1e6;
      for (const c of conns) c.socket.destroy();
      const sorted = latencies.subarray(0, count).sort();
      resolve({
        requests: count,
        rps: (count * 1000) / elapsed,
        p50: percentile(sorted, 50),
        p90: percentile(sorted, 90),
        p99: percentile(sorted, 99),
        max: sorted[count - 1] ?? NaN,
        non2xx,
        errors,
        late,
        ...(rate === undefined ? {} : { offered: rate }),
      });
    };
    const begin = () => {
      t0 = process.hrtime.bigint();
      setTimeout(finish, durationMs);
      if (rate === undefined) for (const c of conns) send(c);
      else {
        idle.push(...conns);
        ticker = setInterval(tick, 1);
      }
    };
    for (let i = 0; i < connections; i++) {
      const socket = connect(port, host);
      socket.setNoDelay(true);
      const c = { socket, busy: false, sentAt: 0n, buf: null, headerEnd: -1, total: -1, chunked: false, status: 0 };
      conns.push(c);
      socket.on('connect', () => {
        started += 1;
        if (started === connections) begin();
      });
      socket.on('error', (error) => {
        if (stopping) return;
        errors += 1;
        if (started < connections) {
          stopping = true;
          for (const x of conns) x.socket.destroy();
          reject(error);
        }
      });
      socket.on('data', (chunk) => {
        if (!c.busy) return;
        c.buf = c.buf ? Buffer.concat([c.buf, chunk]) : chunk;
        if (c.headerEnd < 0) {
          const end = c.buf.indexOf(CRLF2);
          if (end < 0) return;
          c.headerEnd = end + 4;
          c.status = Number(c.buf.toString('latin1', 9, 12));
          const head = c.buf.toString('latin1', 0, end).toLowerCase();
          const cl = head.indexOf('\r\ncontent-length:');
          c.chunked = cl < 0 && head.includes('\r\ntransfer-encoding: chunked');
          c.total = cl >= 0 ? c.headerEnd + Number.parseInt(head.slice(cl + 17, head.indexOf('\r\n', cl + 2) >>> 0), 10) : c.chunked ? -1 : c.headerEnd;
        }
        const complete = c.chunked ? c.buf.length >= c.headerEnd + 5 && c.buf.subarray(c.buf.length - 5).equals(CHUNKED_END) : c.buf.length >= c.total;
        if (!complete) return;
        const ms = Number(process.hrtime.bigint() - c.sentAt) / 1e6;
        if (c.status >= 200 && c.status < 300) record(ms);
        else non2xx += 1;
        c.buf = null;
        c.headerEnd = -1;
        next(c);
      });
    }
  });
}
