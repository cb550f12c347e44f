import { Inject, Injectable } from '@nestjs/common';
import { LIMITS } from '@slipway/contract';
import { ApiException } from '@slipway/server';
import bcrypt from 'bcrypt';
import { GATEWAY_CONFIG, type GatewayConfig } from '../../config.js';
import { parseBody } from '../common/body.js';
import type { OwnerPrincipal } from '../common/owner-principal.js';
import { SignUpBody } from './dto/owner-auth.dto.js';
import { EmailTakenError, OwnersRepository } from './owners.repository.js';

/** A real hash to compare against when the email is unknown, so both paths cost the same. */
const DUMMY_HASH = bcrypt.hashSync('not a password', 10);

export interface OwnerView {
  id: string;
  email: string;
  name: string | null;
  plan: string;
  databases: { used: number; allowed: number };
}

@Injectable()
export class OwnerAuthService {
  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly owners: OwnersRepository,
  ) {}

  async signUp(body: unknown): Promise<Omit<OwnerPrincipal, 'sessionId'>> {
    const input = parseBody(SignUpBody, body, 'Send {"email", "password", "name"}.');
    const hash = await bcrypt.hash(input.password, this.config.BCRYPT_ROUNDS);
    try {
      const owner = await this.owners.create(input.email, input.name || null, hash);
      return { id: owner.id, email: owner.email, name: owner.name, plan: owner.plan };
    } catch (error) {
      if (error instanceof EmailTakenError) throw new ApiException('email_taken', 'An account with this email already exists. Sign in instead.');
      throw error;
    }
  }

  /** passport-local's check: the owner, or null for a wrong email or password (same answer for both). */
  async verify(email: string, password: string): Promise<Omit<OwnerPrincipal, 'sessionId'> | null> {
    const owner = await this.owners.findByEmail(email.trim().toLowerCase());
    const matches = await bcrypt.compare(password, owner?.passwordHash ?? DUMMY_HASH);
    if (!owner?.passwordHash || !matches) return null;
    return { id: owner.id, email: owner.email, name: owner.name, plan: owner.plan };
  }

  async view(owner: Pick<OwnerPrincipal, 'id' | 'email' | 'name' | 'plan'>): Promise<OwnerView> {
    const used = await this.owners.countDatabases(owner.id);
    return { id: owner.id, email: owner.email, name: owner.name, plan: owner.plan, databases: { used, allowed: LIMITS.databasesPerPlan[owner.plan] } };
  }
}
