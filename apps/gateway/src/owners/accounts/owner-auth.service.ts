import { Injectable } from '@nestjs/common';
import { LIMITS, type OwnerView } from '@slipway/contract';
import { ApplicationsRepository, EmailTakenError, OwnersRepository } from '@slipway/platform-data';
import { ApiException } from '@slipway/service-kit';
import { SignInLimiter } from './owner-sign-in-limiter.js';
import { parseBody } from '../../common/index.js';
import type { OwnerPrincipal } from '../access/owner-principal.js';
import { SignUpBody, normaliseEmail } from './dto/owner-auth.dto.js';
import { OwnerPasswords } from './owner-passwords.js';

@Injectable()
export class OwnerAuthService {
  constructor(
    private readonly owners: OwnersRepository,
    private readonly applications: ApplicationsRepository,
    private readonly passwords: OwnerPasswords,
    private readonly limiter: SignInLimiter,
  ) {}

  async signUp(body: unknown): Promise<Omit<OwnerPrincipal, 'sessionId'>> {
    const input = parseBody(SignUpBody, body, 'Send {"email", "password", "name"}.');
    const hash = await this.passwords.hash(input.password);
    try {
      const owner = await this.owners.create(input.email, input.name || null, hash);
      return { id: owner.id, email: owner.email, name: owner.name, plan: owner.plan };
    } catch (error) {
      if (error instanceof EmailTakenError) throw new ApiException('email_taken', 'An account with this email already exists. Sign in instead.');
      throw error;
    }
  }

  /**
   * passport-local's check: the owner, or null for a wrong email or password (same answer for
   * both). Order: length (400, nothing counted) → limits (429/503, nothing hashed) → one hash.
   */
  async verify(email: string, password: string, clientAddress: string): Promise<Omit<OwnerPrincipal, 'sessionId'> | null> {
    this.passwords.assertLength(password);
    const normalised = normaliseEmail(email);
    const attempt = await this.limiter.begin(normalised, clientAddress);
    let matched: Omit<OwnerPrincipal, 'sessionId'> | null;
    try {
      const owner = await this.owners.findByEmail(normalised);
      const matches = await this.passwords.verify(password, owner?.passwordHash ?? null);
      matched = owner && matches ? { id: owner.id, email: owner.email, name: owner.name, plan: owner.plan } : null;
    } catch (error) {
      // No verdict (server busy, database away): the attempt is given back, not counted as a failure.
      await this.limiter.cancelled(attempt);
      throw error;
    }
    if (matched) await this.limiter.succeeded(attempt);
    else await this.limiter.failed(attempt);
    return matched;
  }

  async view(owner: Pick<OwnerPrincipal, 'id' | 'email' | 'name' | 'plan'>): Promise<OwnerView> {
    const used = await this.applications.databases.countForOwner(owner.id);
    return { id: owner.id, email: owner.email, name: owner.name, plan: owner.plan, databases: { used, allowed: LIMITS.databasesPerPlan[owner.plan] } };
  }
}
