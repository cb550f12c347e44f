import { Inject, Injectable } from '@nestjs/common';
import { LIMITS } from '@slipway/contract';
import { ApiException } from '@slipway/service-kit';
import bcrypt from 'bcrypt';
import { GATEWAY_CONFIG, type GatewayConfig } from '../../config.js';
import { ConcurrencyGate } from '../../rate-limit/index.js';

/**
 * Owner password hashing, the only place bcrypt runs for owners. Every hash (sign-up and sign-in,
 * both unauthenticated) goes through one gate, so a flood cannot keep more than
 * OWNER_PASSWORD_CHECKS_MAX hashes running in this process; over 72 bytes is refused, never cut.
 */
@Injectable()
export class OwnerPasswords {
  private readonly gate: ConcurrencyGate;
  private readonly dummy: Promise<string>;
  /** Hashes running right now and the most ever at once (a process-local gauge; tests read it). */
  readonly hashing = { running: 0, peak: 0 };

  constructor(@Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig) {
    this.gate = new ConcurrencyGate(config.OWNER_PASSWORD_CHECKS_MAX, config.OWNER_PASSWORD_CHECK_WAIT_MS);
    // At the configured cost, made at start: a cheaper dummy would tell unknown emails apart by time.
    this.dummy = bcrypt.hash('not a password, only for timing', config.BCRYPT_ROUNDS);
  }

  /** 400 `password_too_long` over 72 UTF-8 bytes: bcrypt would silently ignore the rest. */
  assertLength(password: string): void {
    const max = LIMITS.ownerPassword.maxBytes;
    if (Buffer.byteLength(password, 'utf8') > max) {
      throw new ApiException(
        'password_too_long',
        `Use a password of at most ${max} bytes (UTF-8; accented letters and emoji take 2 to 4). Longer passwords are refused rather than cut short.`,
      );
    }
  }

  hash(password: string): Promise<string> {
    this.assertLength(password);
    return this.gated(() => bcrypt.hash(password, this.config.BCRYPT_ROUNDS));
  }

  /**
   * Compares against the stored hash, or (unknown email, or an owner without a password yet)
   * against a dummy hash of the same cost, so both take as long. Throws `sign_in_busy` (before
   * any hashing) when no slot came free in time.
   */
  async verify(password: string, hash: string | null): Promise<boolean> {
    this.assertLength(password);
    const against = hash ?? (await this.dummy);
    const matches = await this.gated(() => bcrypt.compare(password, against));
    return hash !== null && matches;
  }

  private async gated<T>(work: () => Promise<T>): Promise<T> {
    const outcome = await this.gate.run(async () => {
      this.hashing.running++;
      this.hashing.peak = Math.max(this.hashing.peak, this.hashing.running);
      try {
        return await work();
      } finally {
        this.hashing.running--;
      }
    });
    if (!outcome.ran) throw busy();
    return outcome.value;
  }
}

function busy(): ApiException {
  return new ApiException(
    'sign_in_busy',
    'The server is checking as many passwords as it allows at once; try again in a moment.',
    { retryAfterSeconds: 1 },
    { 'Retry-After': '1' },
  );
}
