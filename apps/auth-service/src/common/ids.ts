import { randomAlphanumeric } from '@slipway/crypto';

/** IDs and session tokens as Better Auth makes them: 32 characters of [A-Za-z0-9] (~190 bits). */
export function newId(): string {
  return randomAlphanumeric(32);
}
