import { Injectable } from '@nestjs/common';
import { AuthErrors, type AuthResult } from '../common/index.js';
import { EmailVerificationService } from '../email-verification/index.js';
import { PasswordHasher } from '../password/index.js';
import { SignInAttempts, type RequestMeta } from '../pipeline/index.js';
import { SessionsService } from '../sessions/index.js';
import { TenantsService, type Tenant } from '../tenants/index.js';
import { TwoFactorChallenges } from '../two-factor/index.js';
import { UsersRepository, userView, type UserRow } from '../users/index.js';
import type { SignInInput } from './dto/sign-in.dto.js';

@Injectable()
export class SignInService {
  constructor(
    private readonly tenants: TenantsService,
    private readonly users: UsersRepository,
    private readonly hasher: PasswordHasher,
    private readonly sessions: SessionsService,
    private readonly verification: EmailVerificationService,
    private readonly attempts: SignInAttempts,
    private readonly twoFactor: TwoFactorChallenges,
  ) {}

  /**
   * Unknown email and wrong password answer alike, after the same bcrypt work. Order: the
   * account's and the address's failure limits (429, nothing hashed) → one compare → the outcome
   * is recorded (a failure may lock the account; a success clears its failures) → the second
   * factor's challenge instead of a session, unless two-factor is off or the device is trusted.
   */
  async signIn(tenant: Tenant, input: SignInInput, meta: RequestMeta): Promise<AuthResult> {
    const attempt = await this.attempts.begin(tenant.applicationId, input.email, meta.ip);
    const credential = await this.checkPassword(tenant, input).catch(async (error: unknown) => {
      // No verdict (database away): the attempt is given back, not counted as a failure.
      await this.attempts.cancelled(attempt);
      throw error;
    });
    if (!credential) {
      await this.attempts.failed(attempt);
      throw AuthErrors.invalidCredentials();
    }
    await this.attempts.succeeded(attempt);
    const { user, passwordHash } = credential;
    if (tenant.settings.requireEmailVerification && !user.email_verified) {
      await this.verification.sendFor(tenant, user, input.callbackURL);
      throw AuthErrors.emailNotVerified();
    }
    const gate = await this.twoFactor.gate(tenant, user, passwordHash, meta, input.rememberMe ?? true);
    if ('challenge' in gate) return gate.challenge;
    const session = await this.sessions.start(tenant, user, meta, input.rememberMe ?? true);
    const body = { redirect: Boolean(input.callbackURL), token: session.token, url: input.callbackURL, user: userView(user) };
    return { body, cookies: [session.cookie, ...gate.cookies], headers: input.callbackURL ? { Location: input.callbackURL } : {} };
  }

  /** The user whose password this is, or null (unknown email or wrong password). */
  private async checkPassword(tenant: Tenant, input: SignInInput): Promise<{ user: UserRow; passwordHash: string } | null> {
    const credential = await this.users.findCredential(this.tenants.db(tenant), input.email);
    const ok = await this.hasher.verify(input.password, credential?.passwordHash ?? null);
    return ok && credential ? credential : null;
  }
}
