import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { UploadLimits } from '@slipway/contract';
import { ApiException } from '@slipway/server';
import busboy, { type Busboy } from 'busboy';
import type { Request, Response } from 'express';
import { SourcePathSet, unsafePathReason } from './source-path.js';

export interface SpooledPart {
  /** Temp file holding the part's bytes. */
  file: string;
  bytes: number;
}

export interface ReceivedUpload {
  archive?: SpooledPart;
  files: SpooledPart[];
  paths: string[];
}

/** The client went away mid-upload: there is nobody to answer. */
export class ClientGoneError extends Error {
  override readonly name = 'ClientGoneError';
}

/**
 * Reads a `multipart/form-data` deploy request into spool files under `dir`, one part at a
 * time, checking as the bytes arrive: field names, the `paths` values (safe, unique after
 * NFC + case folding), the number of parts and the byte limits. On the first problem it stops
 * reading, marks the response `Connection: close` (so the rest of the upload is cut off rather
 * than drained) and rejects with a coded `ApiException`.
 *
 * busboy is used directly rather than through multer: multer drains the whole remaining body
 * before it reports an error, and offers no hook on text fields, so neither the cut-off nor the
 * early `paths` checks would be possible.
 */
export function receiveUpload(req: Request, res: Response, dir: string, limits: UploadLimits): Promise<ReceivedUpload> {
  return new Promise<ReceivedUpload>((resolve, reject) => {
    const result: ReceivedUpload = { files: [], paths: [] };
    const pathSet = new SourcePathSet();
    const writers = new Set<WriteStream>();
    let pendingWrites = 0;
    let parsed = false;
    let settled = false;
    let received = 0;
    let parts = 0;
    let bb: Busboy;

    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      req.off('data', countBytes);
      if (bb) req.unpipe(bb);
      req.pause();
      // A destroyed write stream may still be opening its file: reject only once every one has
      // closed, so the caller's cleanup never races a file appearing in the spool directory.
      const closed = [...writers].map((writer) => new Promise<void>((done) => (writer.closed ? done() : writer.once('close', () => done()))));
      for (const writer of writers) writer.destroy();
      if (!res.headersSent) res.setHeader('Connection', 'close');
      void Promise.all(closed).then(() => reject(error));
    };
    const maybeDone = () => {
      if (!settled && parsed && pendingWrites === 0) {
        settled = true;
        req.off('data', countBytes);
        resolve(result);
      }
    };
    const countBytes = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limits.maxUploadBytes) fail(new ApiException('too_large', `The upload is larger than ${limits.maxUploadBytes} bytes.`));
    };

    try {
      bb = busboy({
        headers: req.headers,
        defParamCharset: 'utf8',
        limits: {
          fieldNameSize: 100,
          fieldSize: limits.maxPathBytes * 4 + 1,
          fields: limits.maxFiles,
          files: limits.maxFiles + 1,
          parts: 2 * limits.maxFiles + 1,
          fileSize: limits.maxUploadBytes + 1,
        },
      });
    } catch (error) {
      fail(new ApiException('bad_request', `The request is not valid multipart/form-data (${(error as Error).message}).`));
      return;
    }

    bb.on('field', (name, value, info) => {
      parts += 1;
      if (name !== 'paths') return fail(unknownField(name));
      if (result.archive) return fail(bothForms());
      if (info.valueTruncated) return fail(new ApiException('bad_request', `paths[${result.paths.length}] is longer than ${limits.maxPathBytes} bytes.`));
      const path = value.normalize('NFC');
      const reason = unsafePathReason(path, limits) ?? pathSet.add(path);
      if (reason) return fail(new ApiException('bad_request', `paths[${result.paths.length}] ${reason}.`));
      result.paths.push(path);
    });

    bb.on('file', (name, stream: Readable, _info) => {
      parts += 1;
      if (settled) return stream.resume();
      if (name !== 'files' && name !== 'archive') return (stream.resume(), fail(unknownField(name)));
      if (name === 'archive' && (result.archive || result.files.length || result.paths.length)) {
        return (stream.resume(), fail(result.archive ? new ApiException('bad_request', 'Send one archive, not several.') : bothForms()));
      }
      if (name === 'files' && result.archive) return (stream.resume(), fail(bothForms()));
      const maxBytes = name === 'archive' ? limits.maxUploadBytes : limits.maxFileBytes;
      const part: SpooledPart = { file: join(dir, `part-${parts}`), bytes: 0 };
      if (name === 'archive') result.archive = part;
      else {
        if (result.files.length >= limits.maxFiles) return (stream.resume(), fail(new ApiException('too_large', `The upload has more than ${limits.maxFiles} files.`)));
        result.files.push(part);
      }
      const writer = createWriteStream(part.file, { flags: 'wx', mode: 0o600 });
      writers.add(writer);
      pendingWrites += 1;
      stream.on('data', (chunk: Buffer) => {
        part.bytes += chunk.length;
        if (part.bytes > maxBytes) {
          fail(new ApiException('too_large', name === 'archive' ? `The archive is larger than ${maxBytes} bytes.` : `files[${result.files.indexOf(part)}] is larger than ${maxBytes} bytes.`));
        }
      });
      stream.on('error', (error: Error) => fail(malformed(error)));
      writer.on('error', (error) => fail(error));
      writer.on('finish', () => {
        writers.delete(writer);
        pendingWrites -= 1;
        maybeDone();
      });
      stream.pipe(writer);
    });

    bb.on('filesLimit', () => fail(new ApiException('too_large', `The upload has more than ${limits.maxFiles} files.`)));
    bb.on('fieldsLimit', () => fail(new ApiException('too_large', `The upload has more than ${limits.maxFiles} paths.`)));
    bb.on('partsLimit', () => fail(new ApiException('too_large', 'The upload has too many parts.')));
    bb.on('error', (error: Error) => fail(malformed(error)));
    bb.on('close', () => {
      parsed = true;
      maybeDone();
    });
    req.on('aborted', () => fail(new ClientGoneError('the client closed the connection during the upload')));
    req.on('data', countBytes);
    req.pipe(bb);
  });
}

function unknownField(name: string): ApiException {
  return new ApiException('bad_request', `Unknown field "${name.slice(0, 100)}": send repeated "files" with matching "paths", or one "archive".`);
}

function bothForms(): ApiException {
  return new ApiException('bad_request', 'Send either "files" with "paths", or one "archive", not both.');
}

function malformed(error: Error): ApiException {
  return new ApiException('bad_request', `The multipart body is malformed (${error.message}).`);
}
