import { Injectable } from '@nestjs/common';
import { AuthErrors, newId, type AuthResult } from '../common/index.js';
import { EmailVerificationService } from '../email-verification/index.js';
import { PasswordHasher } from '../password/index.js';
import type { RequestMeta } from '../pipeline/index.js';
import { SessionsService } from '../sessions/index.js';
import { TenantsService, type Tenant } from '../tenants/index.js';
import { UsersRepository, userView } from '../users/index.js';
import type { SignUpInput } from './dto/sign-up.dto.js';

@Injectable()
export class SignUpService {
  constructor(
    private readonly tenants: TenantsService,
    private readonly users: UsersRepository,
    private readonly hasher: PasswordHasher,
    private readonly sessions: SessionsService,
    private readonly verification: EmailVerificationService,
  ) {}

  async signUp(tenant: Tenant, input: SignUpInput, meta: RequestMeta): Promise<AuthResult> {
    this.hasher.assertAcceptable(input.password);
    const email = input.email.toLowerCase();
    const hash = await this.hasher.hash(input.password);
    const requireVerification = tenant.settings.requireEmailVerification === true;
    const user = await this.users.createWithPassword(
      this.tenants.db(tenant),
      { id: newId(), name: input.name, email, image: input.image ?? null },
      newId(),
      hash,
    );
    if (!user) {
      if (requireVerification) {
        // As Better Auth: with verification required, a taken email gets the same answer as a new one.
        const now = new Date();
        return {
          body: {
            token: null,
            user: { id: newId(), name: input.name, email, emailVerified: false, image: input.image ?? null, createdAt: now, updatedAt: now },
          },
        };
      }
      throw AuthErrors.userExists();
    }
    if (requireVerification) {
      await this.verification.sendFor(tenant, user, input.callbackURL);
      return { body: { token: null, user: userView(user) } };
    }
    const session = await this.sessions.start(tenant, user, meta, input.rememberMe ?? true);
    return { body: { token: session.token, user: userView(user) }, cookies: [session.cookie] };
  }
}
