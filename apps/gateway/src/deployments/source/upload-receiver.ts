import { Transform, type Readable } from 'node:stream';
import { ROOT_DIRECTORY_MAX_LENGTH, checkRootDirectory, type UploadLimits } from '@slipway/contract';
import { ApiException } from '@slipway/server';
import busboy, { type Busboy } from 'busboy';
import type { Request, Response } from 'express';
import { SourcePathSet, unsafePathReason } from './source-path.js';

export interface SpooledPart {
  /** Temp file holding the part's bytes. */
  file: string;
  bytes: number;
}

/** What becomes of each file part, decided by the caller while the bytes arrive. */
export interface PartHandlers<A> {
  /**
   * Consumes the `archive` part as it arrives and settles once it has read all of it (or
   * failed); `received()` is the number of the part's bytes that have arrived so far. `part` is destroyed with the refusal when the request fails for another reason;
   * the handler must then clean up after itself before it settles.
   */
  archive(part: Readable, received: () => number): Promise<A>;
  /** Consumes (spools) the `files` part number `index` and resolves with the file it wrote. */
  file(part: Readable, index: number): Promise<string>;
}

export interface ReceivedUpload<A> {
  archive?: { value: A; bytes: number };
  files: SpooledPart[];
  paths: string[];
  /** The `rootDirectory` field, checked (`checkRootDirectory`); null when none was sent. */
  rootDirectory: string | null;
}

/** The client went away mid-upload: there is nobody to answer. */
export class ClientGoneError extends Error {
  override readonly name = 'ClientGoneError';
}

/**
 * Reads a `multipart/form-data` deploy request one part at a time, checking as the bytes
 * arrive: field names, the `paths` values (safe, unique after NFC + case folding), the
 * `rootDirectory` value (it may come before or after the files: it only travels with the
 * result), the number of parts and the byte limits. Each file part is handed, as it starts, to
 * the caller's handler (the archive is validated and stored while it streams; `files` parts
 * are spooled).
 * An upload that sends no byte for `idleTimeoutSeconds` fails with `upload_stalled`.
 * On the first problem — here or in a handler — it stops reading, marks the response
 * `Connection: close` (so the rest of the upload is cut off rather than drained), destroys the
 * parts still being consumed, waits until every handler has settled (so the caller's cleanup
 * never races a file still being written) and rejects with that first error.
 *
 * busboy is used directly rather than through multer: multer drains the whole remaining body
 * before it reports an error, and offers no hook on text fields, so neither the cut-off nor the
 * early `paths` checks would be possible.
 */
export function receiveUpload<A>(req: Request, res: Response, limits: UploadLimits, handlers: PartHandlers<A>): Promise<ReceivedUpload<A>> {
  return new Promise<ReceivedUpload<A>>((resolve, reject) => {
    const result: ReceivedUpload<A> = { files: [], paths: [], rootDirectory: null };
    let rootDirectorySeen = false;
    const pathSet = new SourcePathSet();
    const consuming = new Set<Transform>();
    const handling: Promise<unknown>[] = [];
    let pending = 0;
    let archiveSeen = false;
    let parsed = false;
    let settled = false;
    let received = 0;
    let bb: Busboy;
    let idleTimer: NodeJS.Timeout | undefined;

    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(idleTimer);
      req.off('data', countBytes);
      if (bb) req.unpipe(bb);
      req.pause();
      for (const part of consuming) part.destroy(error);
      if (!res.headersSent) res.setHeader('Connection', 'close');
      void Promise.allSettled(handling).then(() => reject(error));
    };
    const maybeDone = () => {
      if (!settled && parsed && pending === 0) {
        settled = true;
        clearTimeout(idleTimer);
        req.off('data', countBytes);
        resolve(result);
      }
    };
    // Time without a byte from the client. Time the gateway itself holds the body back
    // (backpressure: the request is paused or has unread bytes) is not the client's: re-armed.
    const idleMs = limits.idleTimeoutSeconds * 1000;
    // Runs for every chunk: one timer, pushed back in place (no clear + new timer each time).
    const armIdle = () => {
      if (idleTimer) idleTimer.refresh();
      else idleTimer = setTimeout(onIdle, idleMs);
    };
    const onIdle = () => {
      if (settled || req.readableEnded) return;
      if (req.readableFlowing === false || req.readableLength > 0) return armIdle();
      fail(new ApiException('upload_stalled', `The upload sent no byte for ${limits.idleTimeoutSeconds} seconds; it was dropped.`));
    };
    const countBytes = (chunk: Buffer) => {
      armIdle();
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
          // The paths, and one rootDirectory.
          fields: limits.maxFiles + 1,
          files: limits.maxFiles + 1,
          parts: 2 * limits.maxFiles + 2,
          fileSize: limits.maxUploadBytes + 1,
        },
      });
    } catch (error) {
      fail(new ApiException('bad_request', `The request is not valid multipart/form-data (${(error as Error).message}).`));
      return;
    }

    bb.on('field', (name, value, info) => {
      if (name === 'rootDirectory') {
        if (rootDirectorySeen) return fail(new ApiException('bad_request', 'Send one "rootDirectory", not several.'));
        rootDirectorySeen = true;
        const check = info.valueTruncated ? { ok: false as const, problem: `is longer than ${ROOT_DIRECTORY_MAX_LENGTH} characters` } : checkRootDirectory(value);
        if (!check.ok) return fail(new ApiException('bad_request', `rootDirectory ${check.problem}.`));
        result.rootDirectory = check.value;
        return;
      }
      if (name !== 'paths') return fail(unknownField(name));
      if (archiveSeen) return fail(bothForms());
      if (result.paths.length >= limits.maxFiles) return fail(new ApiException('too_large', `The upload has more than ${limits.maxFiles} paths.`));
      if (info.valueTruncated) return fail(new ApiException('bad_request', `paths[${result.paths.length}] is longer than ${limits.maxPathBytes} bytes.`));
      const path = value.normalize('NFC');
      const reason = unsafePathReason(path, limits) ?? pathSet.add(path);
      if (reason) return fail(new ApiException('bad_request', `paths[${result.paths.length}] ${reason}.`));
      result.paths.push(path);
    });

    bb.on('file', (name, stream: Readable, _info) => {
      if (settled) return stream.resume();
      if (name !== 'files' && name !== 'archive') return (stream.resume(), fail(unknownField(name)));
      if (name === 'archive' && (archiveSeen || result.files.length || result.paths.length)) {
        return (stream.resume(), fail(archiveSeen ? new ApiException('bad_request', 'Send one archive, not several.') : bothForms()));
      }
      if (name === 'files' && archiveSeen) return (stream.resume(), fail(bothForms()));
      if (name === 'files' && result.files.length >= limits.maxFiles) {
        return (stream.resume(), fail(new ApiException('too_large', `The upload has more than ${limits.maxFiles} files.`)));
      }
      const maxBytes = name === 'archive' ? limits.maxUploadBytes : limits.maxFileBytes;
      const index = result.files.length;
      let bytes = 0;
      // Counts (and limits) the part's bytes on their way to the handler.
      const part = new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          bytes += chunk.length;
          if (bytes > maxBytes) {
            const error = new ApiException('too_large', name === 'archive' ? `The archive is larger than ${maxBytes} bytes.` : `files[${index}] is larger than ${maxBytes} bytes.`);
            fail(error);
            return callback(error);
          }
          callback(null, chunk);
        },
      });
      // fail() destroys the part with the refusal; the handler sees that through its own streams.
      part.on('error', () => undefined);
      consuming.add(part);
      pending += 1;
      stream.on('error', (error: Error) => fail(malformed(error)));
      stream.pipe(part);
      let task: Promise<unknown>;
      if (name === 'archive') {
        archiveSeen = true;
        task = handlers.archive(part, () => bytes).then((value) => {
          result.archive = { value, bytes };
        });
      } else {
        const spooled: SpooledPart = { file: '', bytes: 0 };
        result.files.push(spooled);
        task = handlers.file(part, index).then((file) => {
          spooled.file = file;
          spooled.bytes = bytes;
        });
      }
      handling.push(
        task.then(
          () => {
            consuming.delete(part);
            pending -= 1;
            maybeDone();
          },
          (error: Error) => {
            consuming.delete(part);
            fail(error);
          },
        ),
      );
    });

    bb.on('filesLimit', () => fail(new ApiException('too_large', `The upload has more than ${limits.maxFiles} files.`)));
    bb.on('fieldsLimit', () => fail(new ApiException('too_large', `The upload has more than ${limits.maxFiles} paths.`)));
    bb.on('partsLimit', () => fail(new ApiException('too_large', 'The upload has too many parts.')));
    bb.on('error', (error: Error) => fail(malformed(error)));
    bb.on('close', () => {
      parsed = true;
      maybeDone();
    });
    const gone = () => fail(new ClientGoneError('the client closed the connection during the upload'));
    req.on('aborted', gone);
    req.on('close', () => {
      if (!req.complete) gone();
    });
    req.on('data', countBytes);
    req.once('end', () => clearTimeout(idleTimer));
    if (!req.readableEnded) armIdle();
    req.pipe(bb);
    // The client may have gone while the key and admission were checked: its events are past.
    if (req.destroyed && !req.complete) gone();
  });
}

function unknownField(name: string): ApiException {
  return new ApiException('bad_request', `Unknown field "${name.slice(0, 100)}": send repeated "files" with matching "paths", or one "archive" (and optionally one "rootDirectory").`);
}

function bothForms(): ApiException {
  return new ApiException('bad_request', 'Send either "files" with "paths", or one "archive", not both.');
}

function malformed(error: Error): ApiException {
  return new ApiException('bad_request', `The multipart body is malformed (${error.message}).`);
}
