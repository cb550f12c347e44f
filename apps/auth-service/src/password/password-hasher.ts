import { Inject, Injectable } from '@nestjs/common';
import bcrypt from 'bcrypt';
import { AUTH_CONFIG, type AuthConfig } from '../config.js';
import { AuthErrors } from '../common/index.js';

export const PASSWORD_MIN_LENGTH = 8;
/** bcrypt reads at most 72 bytes; longer passwords are refused, never silently truncated. */
export const PASSWORD_MAX_BYTES = 72;

@Injectable()
export class PasswordHasher {
  private dummy: Promise<string> | undefined;

  constructor(@Inject(AUTH_CONFIG) private readonly config: AuthConfig) {}

  assertAcceptable(password: string): void {
    if (password.length < PASSWORD_MIN_LENGTH) throw AuthErrors.passwordTooShort();
    if (Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES) throw AuthErrors.passwordTooLong();
  }

  hash(password: string): Promise<string> {
    return bcrypt.hash(password, this.config.AUTH_BCRYPT_COST);
  }

  /** Compares against the stored hash, or against a dummy hash of the same cost so unknown emails take as long. */
  async verify(password: string, hash: string | null): Promise<boolean> {
    if (Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES) {
      await bcrypt.compare(password.slice(0, 8), await this.dummyHash());
      return false;
    }
    if (hash === null) {
      await bcrypt.compare(password, await this.dummyHash());
      return false;
    }
    return bcrypt.compare(password, hash);
  }

  private dummyHash(): Promise<string> {
    this.dummy ??= bcrypt.hash('not-a-real-password-just-timing', this.config.AUTH_BCRYPT_COST);
    return this.dummy;
  }
}
