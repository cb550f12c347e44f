/** A platform error answer (`{error, code, documentation}` and any extras such as `taskId`). */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  /** What to do about it, printed under the error line (not in --json). */
  hint?: string;

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: Record<string, unknown>,
  ) {
    super(message);
  }

  get documentation(): string | undefined {
    return typeof this.body['documentation'] === 'string' ? this.body['documentation'] : undefined;
  }

  get retryAfterSeconds(): number | undefined {
    const value = this.body['retryAfterSeconds'];
    return typeof value === 'number' ? value : undefined;
  }

  get taskId(): string | undefined {
    const value = this.body['taskId'];
    return typeof value === 'string' ? value : undefined;
  }

  /** Authentication problems are exit 2 (as usage errors), every other API refusal exit 1. */
  get exitCode(): 1 | 2 {
    return this.status === 401 || this.status === 403 ? 2 : 1;
  }

  /** The one line a person reads: the code first, then the platform's message. */
  line(): string {
    return `${this.code}: ${this.message}`;
  }

  details(): string[] {
    const lines = [`HTTP ${this.status}`];
    if (this.documentation) lines.push(`documentation: ${this.documentation}`);
    if (typeof this.body['correlationId'] === 'string') lines.push(`correlationId: ${this.body['correlationId']}`);
    lines.push(`body: ${JSON.stringify(this.body)}`);
    return lines;
  }

  static async fromResponse(response: Response): Promise<ApiError> {
    const text = await response.text().catch(() => '');
    let body: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
    } catch {
      body = { text: text.slice(0, 500) };
    }
    const code = typeof body['code'] === 'string' ? body['code'] : `http_${response.status}`;
    const raw = typeof body['text'] === 'string' && body['text'] ? `: ${body['text'].slice(0, 200)}` : '';
    const message = typeof body['error'] === 'string' ? body['error'] : `HTTP ${response.status} ${response.statusText}${raw}`.trim();
    return new ApiError(response.status, code, message, body);
  }
}

/** The platform could not be reached at all (refused, DNS, reset). */
export class UnreachableError extends Error {
  override readonly name = 'UnreachableError';
}
