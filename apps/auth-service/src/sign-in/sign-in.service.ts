import { Injectable } from '@nestjs/common';
import { AuthErrors, type AuthResult } from '../common/index.js';
import { EmailVerificationService } from '../email-verification/index.js';
import { PasswordHasher } from '../password/index.js';
import type { RequestMeta } from '../pipeline/index.js';
import { SessionsService } from '../sessions/index.js';
import { TenantsService, type Tenant } from '../tenants/index.js';
import { UsersRepository, userView } from '../users/index.js';
import type { SignInInput } from './dto/sign-in.dto.js';

@Injectable()
export class SignInService {
  constructor(
    private readonly tenants: TenantsService,
    private readonly users: UsersRepository,
    private readonly hasher: PasswordHasher,
    private readonly sessions: SessionsService,
    private readonly verification: EmailVerificationService,
  ) {}

  /** Unknown email and wrong password answer alike, after the same bcrypt work. */
  async signIn(tenant: Tenant, input: SignInInput, meta: RequestMeta): Promise<AuthResult> {
    const credential = await this.users.findCredential(this.tenants.db(tenant), input.email);
    const ok = await this.hasher.verify(input.password, credential?.passwordHash ?? null);
    if (!ok || !credential) throw AuthErrors.invalidCredentials();
    const { user } = credential;
    if (tenant.settings.requireEmailVerification && !user.email_verified) {
      await this.verification.sendFor(tenant, user, input.callbackURL);
      throw AuthErrors.emailNotVerified();
    }
    const session = await this.sessions.start(tenant, user, meta, input.rememberMe ?? true);
    const body = { redirect: Boolean(input.callbackURL), token: session.token, url: input.callbackURL, user: userView(user) };
    return { body, cookies: [session.cookie], headers: input.callbackURL ? { Location: input.callbackURL } : {} };
  }
}
