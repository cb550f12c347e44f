/**
 * A platform error answer as a client receives it: `{error, code, documentation}` plus any
 * extras (`taskId`, `retryAfterSeconds`, `correlationId`). The CLI and the dashboard both throw
 * this; each words it for its own reader.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  /** What to do about it, added by the client that knows (the CLI prints it under the error line). */
  hint?: string;

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: Record<string, unknown> = {},
  ) {
    super(message);
  }

  get documentation(): string | undefined {
    return this.stringField('documentation');
  }

  get correlationId(): string | undefined {
    return this.stringField('correlationId');
  }

  get taskId(): string | undefined {
    return this.stringField('taskId');
  }

  get retryAfterSeconds(): number | undefined {
    const value = this.body['retryAfterSeconds'];
    return typeof value === 'number' ? value : undefined;
  }

  /** The one line a person reads: the code first, then the platform's message. */
  line(): string {
    return `${this.code}: ${this.message}`;
  }

  /**
   * From a refused answer's status and text. A body that is not the platform's JSON (a proxy's
   * page, an empty answer) gets the code `http_<status>` and a message naming the status.
   */
  static fromText(status: number, statusText: string, text: string): ApiError {
    let body: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
    } catch {
      body = { text: text.slice(0, 500) };
    }
    const code = typeof body['code'] === 'string' ? body['code'] : `http_${status}`;
    const raw = typeof body['text'] === 'string' && body['text'] ? `: ${body['text'].slice(0, 200)}` : '';
    const message = typeof body['error'] === 'string' ? body['error'] : `HTTP ${status} ${statusText}${raw}`.trim();
    return new ApiError(status, code, message, body);
  }

  static async fromResponse(response: Response): Promise<ApiError> {
    return ApiError.fromText(response.status, response.statusText, await response.text().catch(() => ''));
  }

  private stringField(name: string): string | undefined {
    const value = this.body[name];
    return typeof value === 'string' ? value : undefined;
  }
}
