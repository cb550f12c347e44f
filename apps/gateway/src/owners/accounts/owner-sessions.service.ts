import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { sha256Hex } from '@slipway/crypto';
import { OwnersRepository, type OwnerId } from '@slipway/platform-data';
import { GATEWAY_CONFIG, type GatewayConfig } from '../../config.js';
import type { OwnerPrincipal } from '../access/owner-principal.js';

/** Dashboard sessions: a random token in the cookie, only its SHA-256 in owner_sessions. */
@Injectable()
export class OwnerSessionsService {
  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly owners: OwnersRepository,
  ) {}

  async start(ownerId: OwnerId): Promise<{ token: string; expiresAt: Date }> {
    const token = randomBytes(32).toString('base64url');
    const now = new Date();
    const expiresAt = new Date(now.getTime() + this.config.OWNER_SESSION_DAYS * 86_400_000);
    await this.owners.sessions.deleteExpired(ownerId, now);
    await this.owners.sessions.create(ownerId, sha256Hex(token), expiresAt);
    return { token, expiresAt };
  }

  resolve(token: string): Promise<OwnerPrincipal | null> {
    if (token.length > 128) return Promise.resolve(null);
    return this.owners.sessions.findLive(sha256Hex(token), new Date());
  }

  /** Ends the caller's dashboard session (a bearer credential has none: nothing to end). */
  async end(owner: OwnerPrincipal): Promise<void> {
    if (owner.sessionId) await this.owners.sessions.delete(owner.id, owner.sessionId);
  }
}
