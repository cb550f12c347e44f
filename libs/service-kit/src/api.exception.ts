import { ERROR_CODES, type ErrorCode } from '@slipway/contract';

/**
 * A domain failure with a stable code from the contract catalogue. Services throw it; the
 * transport's filter maps it to status + `{error, code, documentation}` (+ extras such as
 * `taskId` or `retryAfterSeconds`).
 */
export class ApiException extends Error {
  override readonly name = 'ApiException';
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extras: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = ERROR_CODES[code].status;
  }
}
