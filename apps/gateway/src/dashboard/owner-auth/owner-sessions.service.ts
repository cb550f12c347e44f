import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { sha256Hex } from '@slipway/crypto';
import { GATEWAY_CONFIG, type GatewayConfig } from '../../config.js';
import type { OwnerPrincipal } from '../common/owner-principal.js';
import { OwnerSessionsRepository } from './owner-sessions.repository.js';

/** Dashboard sessions: a random token in the cookie, only its SHA-256 in owner_sessions. */
@Injectable()
export class OwnerSessionsService {
  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly sessions: OwnerSessionsRepository,
  ) {}

  async start(ownerId: string): Promise<{ token: string; expiresAt: Date }> {
    const token = randomBytes(32).toString('base64url');
    const now = new Date();
    const expiresAt = new Date(now.getTime() + this.config.OWNER_SESSION_DAYS * 86_400_000);
    await this.sessions.deleteExpired(ownerId, now);
    await this.sessions.create(ownerId, sha256Hex(token), expiresAt);
    return { token, expiresAt };
  }

  resolve(token: string): Promise<OwnerPrincipal | null> {
    if (token.length > 128) return Promise.resolve(null);
    return this.sessions.findLive(sha256Hex(token), new Date());
  }

  end(owner: OwnerPrincipal): Promise<void> {
    return this.sessions.delete(owner.id, owner.sessionId);
  }
}
