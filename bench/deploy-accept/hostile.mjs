// Hostile uploads for bench/deploy-accept's memory row: archives that lie about themselves
// (extended tar headers and GNU long names declaring megabytes, gzip bombs, a zip with
// oversized metadata) and clients that stop sending. The same classes as
// apps/gateway/test/upload-memory.spec.ts, which asserts on them; here they are only measured.
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { createGzip } from 'node:zlib';

const MiB = 1024 * 1024;

/** One 512-byte tar header block declaring anything (base-256 sizes past the octal field). */
function tarHeader(name, type, size, gnu) {
  const block = Buffer.alloc(512);
  block.write(name, 0);
  block.write('0000644\0', 100);
  if (size < 8 ** 11) block.write(`${size.toString(8).padStart(11, '0')}\0`, 124);
  else {
    block[124] = 0x80;
    let rest = BigInt(size);
    for (let i = 135; i > 124; i--, rest >>= 8n) block[i] = Number(rest & 0xffn);
  }
  block.write(type, 156);
  block.write(gnu ? 'ustar  \0' : 'ustar\u000000', 257, 'latin1');
  block.fill(' ', 148, 156);
  block.write(
    `${block
      .reduce((sum, b) => sum + b, 0)
      .toString(8)
      .padStart(6, '0')}\0 `,
    148,
    'latin1',
  );
  return block;
}

async function* gzipped(source) {
  const z = createGzip();
  const feed = (async () => {
    for await (const chunk of source) {
      if (z.destroyed) break;
      if (!z.write(chunk)) await new Promise((r) => (z.once('drain', r), z.once('close', r)));
    }
    z.end();
  })();
  try {
    for await (const chunk of z) yield chunk;
  } finally {
    z.destroy();
    await feed.catch(() => undefined);
  }
}

async function* longHeader(type, declared, offered) {
  yield tarHeader('././@LongLink', type, declared, type === 'L' || type === 'K');
  const filler = Buffer.alloc(64 * 1024, 0x31);
  for (let sent = 0; sent < offered; sent += filler.length) yield filler;
}

async function* zeros(total) {
  const zero = Buffer.alloc(MiB);
  for (let i = 0; i < total / MiB; i++) yield zero;
}

async function* stall(seconds) {
  yield tarHeader('slow.bin', '0', MiB, false);
  await new Promise((r) => setTimeout(r, seconds * 1000));
}

function zipWithOversizedRecord() {
  const name = Buffer.from('index.html');
  const extra = Buffer.alloc(65_530, 0x20);
  extra.writeUInt16LE(0xcafe, 0);
  extra.writeUInt16LE(extra.length - 4, 2);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(name.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(name.length, 28);
  central.writeUInt16LE(extra.length, 30);
  central.writeUInt16LE(65_535, 32);
  const record = Buffer.concat([central, name, extra, Buffer.alloc(65_535, 0x63)]);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(record.length, 12);
  end.writeUInt32LE(local.length + name.length, 16);
  end.writeUInt16LE(65_535, 20);
  return Buffer.concat([local, name, record, end, Buffer.alloc(65_535, 0x2e)]);
}

/** The 20 uploads: [label, () => async iterable of the archive's bytes]. */
export function hostileUploads(idleSeconds) {
  const one = (buffer) =>
    (async function* () {
      yield buffer;
    })();
  return [
    ...[1, 2, 3, 4].map((i) => [`gzipped PAX header declaring 48 MiB #${i}`, () => gzipped(longHeader('x', 48 * MiB, 48 * MiB))]),
    ...[1, 2].map((i) => [`PAX header declaring 48 MiB #${i}`, () => longHeader('x', 48 * MiB, 48 * MiB)]),
    ['PAX global header declaring 48 MiB', () => longHeader('g', 48 * MiB, 32 * MiB)],
    ['PAX header declaring 1 TiB', () => longHeader('x', 2 ** 40, 32 * MiB)],
    ['gzipped GNU long name declaring 48 MiB', () => gzipped(longHeader('L', 48 * MiB, 48 * MiB))],
    ['GNU long name declaring 48 MiB', () => longHeader('L', 48 * MiB, 32 * MiB)],
    ['GNU long link name declaring 48 MiB', () => longHeader('K', 48 * MiB, 32 * MiB)],
    ['gzipped GNU long link name declaring 1 TiB', () => gzipped(longHeader('K', 2 ** 40, 48 * MiB))],
    ...[1, 2, 3].map((i) => [`gzip bomb, 1 GiB of zeros #${i}`, () => gzipped(zeros(1024 * MiB))]),
    [
      'tar.gz whose file is 100 MiB of zeros',
      () =>
        gzipped(
          (async function* () {
            yield tarHeader('zeros.bin', '0', 100 * MiB, false);
            yield* zeros(100 * MiB);
          })(),
        ),
    ],
    ...[1, 2].map((i) => [`stops sending #${i}`, () => stall(idleSeconds + 3)]),
    ['zip record with 192 KiB of metadata', () => one(zipWithOversizedRecord())],
    ['gzipped PAX global header declaring 48 MiB', () => gzipped(longHeader('g', 48 * MiB, 48 * MiB))],
  ];
}

/** POSTs one archive part (chunked) and resolves with `status code`, or `cut off` when the connection closed under the write. */
export function sendHostile(port, key, archive) {
  const boundary = `bench${randomBytes(6).toString('hex')}`;
  return new Promise((resolve) => {
    const req = request({
      host: '127.0.0.1',
      port,
      path: '/api/v1/deploy',
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'transfer-encoding': 'chunked',
      },
    });
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        let code = '';
        try {
          code = JSON.parse(Buffer.concat(chunks).toString()).code ?? '';
        } catch {
          /* not JSON */
        }
        resolve(`${res.statusCode} ${code}`.trim());
      });
    });
    req.on('error', (error) => {
      if (!answered) resolve(`cut off (${error.code})`);
    });
    void (async () => {
      try {
        req.write(`--${boundary}\r\nContent-Disposition: form-data; name="archive"; filename="x.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
        for await (const chunk of archive) {
          if (answered || req.destroyed) return;
          if (!req.write(chunk)) await new Promise((r) => (req.once('drain', r), req.once('close', r)));
        }
        if (!req.destroyed) req.end(`\r\n--${boundary}--\r\n`);
      } catch {
        /* cut off: the answer (if any) is what counts */
      }
    })();
  });
}
