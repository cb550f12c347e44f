import { ApiError, terminalJson } from '@slipway/contract';

/** The platform's error answer: one class for every client (libs/contract). */
export { ApiError };

/** Authentication problems are exit 2 (as usage errors), every other API refusal exit 1. */
export function exitCodeOf(error: ApiError): 1 | 2 {
  return error.status === 401 || error.status === 403 ? 2 : 1;
}

/** What `--verbose` adds under the error line. */
export function detailsOf(error: ApiError): string[] {
  const lines = [`HTTP ${error.status}`];
  if (error.documentation) lines.push(`documentation: ${error.documentation}`);
  if (error.correlationId) lines.push(`correlationId: ${error.correlationId}`);
  lines.push(`body: ${terminalJson(error.body)}`);
  return lines;
}

/** The platform could not be reached at all (refused, DNS, reset). */
export class UnreachableError extends Error {
  override readonly name = 'UnreachableError';
}
