import { Transform, type Readable } from 'node:stream';
import { ROOT_DIRECTORY_MAX_LENGTH, checkRootDirectory, type UploadLimits } from '@slipway/contract';
import { ApiException } from '@slipway/service-kit';
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
  return new Promise<ReceivedUpload<A>>((resolve, reject) => new UploadReception(req, res, limits, handlers, resolve, reject).start());
}

/** One upload being read (receiveUpload): its state, and a method per event. */
class UploadReception<A> {
  private readonly result: ReceivedUpload<A> = { files: [], paths: [], rootDirectory: null };
  private rootDirectorySeen = false;
  private readonly pathSet = new SourcePathSet();
  /** The parts whose handler is still reading them. */
  private readonly consuming = new Set<Transform>();
  /** Every handler's settling (fail waits for all of them). */
  private readonly handling: Promise<unknown>[] = [];
  private pending = 0;
  private archiveSeen = false;
  private parsed = false;
  private settled = false;
  private received = 0;
  private bb?: Busboy;
  private idleTimer?: NodeJS.Timeout;
  private readonly idleMs: number;

  constructor(
    private readonly req: Request,
    private readonly res: Response,
    private readonly limits: UploadLimits,
    private readonly handlers: PartHandlers<A>,
    private readonly resolve: (upload: ReceivedUpload<A>) => void,
    private readonly reject: (error: Error) => void,
  ) {
    this.idleMs = limits.idleTimeoutSeconds * 1000;
  }

  start(): void {
    const { req, limits } = this;
    try {
      this.bb = busboy({
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
      this.fail(new ApiException('bad_request', `The request is not valid multipart/form-data (${(error as Error).message}).`));
      return;
    }
    const bb = this.bb;
    bb.on('field', (name, value, info) => this.onField(name, value, info.valueTruncated));
    bb.on('file', (name, stream: Readable) => this.onFile(name, stream));
    bb.on('filesLimit', () => this.fail(new ApiException('too_large', `The upload has more than ${limits.maxFiles} files.`)));
    bb.on('fieldsLimit', () => this.fail(new ApiException('too_large', `The upload has more than ${limits.maxFiles} paths.`)));
    bb.on('partsLimit', () => this.fail(new ApiException('too_large', 'The upload has too many parts.')));
    bb.on('error', (error: Error) => this.fail(malformed(error)));
    bb.on('close', () => {
      this.parsed = true;
      this.maybeDone();
    });
    const gone = () => this.fail(new ClientGoneError('the client closed the connection during the upload'));
    req.on('aborted', gone);
    req.on('close', () => {
      if (!req.complete) gone();
    });
    req.on('data', this.countBytes);
    req.once('end', () => clearTimeout(this.idleTimer));
    if (!req.readableEnded) this.armIdle();
    req.pipe(bb);
    // The client may have gone while the key and admission were checked: its events are past.
    if (req.destroyed && !req.complete) gone();
  }

  private fail(error: Error): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.idleTimer);
    this.req.off('data', this.countBytes);
    if (this.bb) this.req.unpipe(this.bb);
    this.req.pause();
    for (const part of this.consuming) part.destroy(error);
    if (!this.res.headersSent) this.res.setHeader('Connection', 'close');
    void Promise.allSettled(this.handling).then(() => this.reject(error));
  }

  private maybeDone(): void {
    if (!this.settled && this.parsed && this.pending === 0) {
      this.settled = true;
      clearTimeout(this.idleTimer);
      this.req.off('data', this.countBytes);
      this.resolve(this.result);
    }
  }

  // Time without a byte from the client. Time the gateway itself holds the body back
  // (backpressure: the request is paused or has unread bytes) is not the client's: re-armed.
  // Runs for every chunk: one timer, pushed back in place (no clear + new timer each time).
  private armIdle(): void {
    if (this.idleTimer) this.idleTimer.refresh();
    else this.idleTimer = setTimeout(this.onIdle, this.idleMs);
  }

  private readonly onIdle = (): void => {
    const { req } = this;
    if (this.settled || req.readableEnded) return;
    if (req.readableFlowing === false || req.readableLength > 0) return this.armIdle();
    this.fail(new ApiException('upload_stalled', `The upload sent no byte for ${this.limits.idleTimeoutSeconds} seconds; it was dropped.`));
  };

  private readonly countBytes = (chunk: Buffer): void => {
    this.armIdle();
    this.received += chunk.length;
    if (this.received > this.limits.maxUploadBytes) this.fail(new ApiException('too_large', `The upload is larger than ${this.limits.maxUploadBytes} bytes.`));
  };

  private onField(name: string, value: string, valueTruncated: boolean): void {
    const { result, limits } = this;
    if (name === 'rootDirectory') {
      if (this.rootDirectorySeen) return this.fail(new ApiException('bad_request', 'Send one "rootDirectory", not several.'));
      this.rootDirectorySeen = true;
      const check = valueTruncated ? { ok: false as const, problem: `is longer than ${ROOT_DIRECTORY_MAX_LENGTH} characters` } : checkRootDirectory(value);
      if (!check.ok) return this.fail(new ApiException('bad_request', `rootDirectory ${check.problem}.`));
      result.rootDirectory = check.value;
      return;
    }
    if (name !== 'paths') return this.fail(unknownField(name));
    if (this.archiveSeen) return this.fail(bothForms());
    if (result.paths.length >= limits.maxFiles) return this.fail(new ApiException('too_large', `The upload has more than ${limits.maxFiles} paths.`));
    if (valueTruncated) return this.fail(new ApiException('bad_request', `paths[${result.paths.length}] is longer than ${limits.maxPathBytes} bytes.`));
    const path = value.normalize('NFC');
    const reason = unsafePathReason(path, limits) ?? this.pathSet.add(path);
    if (reason) return this.fail(new ApiException('bad_request', `paths[${result.paths.length}] ${reason}.`));
    result.paths.push(path);
  }

  /** A file part starts: refused at once, or counted and handed to its handler. */
  private onFile(name: string, stream: Readable): void {
    const { result, limits } = this;
    if (this.settled) return void stream.resume();
    const refusal = this.refusalOf(name);
    if (refusal) {
      stream.resume();
      return this.fail(refusal);
    }
    const maxBytes = name === 'archive' ? limits.maxUploadBytes : limits.maxFileBytes;
    const index = result.files.length;
    let bytes = 0;
    const fail = (error: Error) => this.fail(error);
    // Counts (and limits) the part's bytes on their way to the handler.
    const part = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        bytes += chunk.length;
        if (bytes > maxBytes) {
          const error = new ApiException(
            'too_large',
            name === 'archive' ? `The archive is larger than ${maxBytes} bytes.` : `files[${index}] is larger than ${maxBytes} bytes.`,
          );
          fail(error);
          return callback(error);
        }
        callback(null, chunk);
      },
    });
    // fail() destroys the part with the refusal; the handler sees that through its own streams.
    part.on('error', () => undefined);
    this.consuming.add(part);
    this.pending += 1;
    stream.on('error', (error: Error) => this.fail(malformed(error)));
    stream.pipe(part);
    let task: Promise<unknown>;
    if (name === 'archive') {
      this.archiveSeen = true;
      task = this.handlers
        .archive(part, () => bytes)
        .then((value) => {
          result.archive = { value, bytes };
        });
    } else {
      const spooled: SpooledPart = { file: '', bytes: 0 };
      result.files.push(spooled);
      task = this.handlers.file(part, index).then((file) => {
        spooled.file = file;
        spooled.bytes = bytes;
      });
    }
    this.handling.push(
      task.then(
        () => {
          this.consuming.delete(part);
          this.pending -= 1;
          this.maybeDone();
        },
        (error: Error) => {
          this.consuming.delete(part);
          this.fail(error);
        },
      ),
    );
  }

  /** Why a file part named `name` cannot come now (undefined: it can). */
  private refusalOf(name: string): ApiException | undefined {
    const { result, limits } = this;
    if (name !== 'files' && name !== 'archive') return unknownField(name);
    if (name === 'archive' && (this.archiveSeen || result.files.length || result.paths.length)) {
      return this.archiveSeen ? new ApiException('bad_request', 'Send one archive, not several.') : bothForms();
    }
    if (name === 'files' && this.archiveSeen) return bothForms();
    if (name === 'files' && result.files.length >= limits.maxFiles) return new ApiException('too_large', `The upload has more than ${limits.maxFiles} files.`);
    return undefined;
  }
}

function unknownField(name: string): ApiException {
  return new ApiException(
    'bad_request',
    `Unknown field "${name.slice(0, 100)}": send repeated "files" with matching "paths", or one "archive" (and optionally one "rootDirectory").`,
  );
}

function bothForms(): ApiException {
  return new ApiException('bad_request', 'Send either "files" with "paths", or one "archive", not both.');
}

function malformed(error: Error): ApiException {
  return new ApiException('bad_request', `The multipart body is malformed (${error.message}).`);
}
