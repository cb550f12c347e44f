import { Injectable } from '@nestjs/common';
import { PrismaService } from '../common/prisma.service.js';

export interface StoredApiKey {
  id: string;
  applicationId: string;
  keyHash: string;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

@Injectable()
export class ApiKeysRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Raw SQL rather than the model API: this runs on every API request, and Prisma's query
   * compiler costs ~1 ms of CPU per model query against ~0.4 ms for a raw one (bench/README).
   */
  async findByPrefix(prefix: string): Promise<StoredApiKey | null> {
    const rows = await this.prisma.client.$queryRaw<StoredApiKey[]>`
      SELECT id::text AS "id", application_id::text AS "applicationId", key_hash AS "keyHash",
             revoked_at AS "revokedAt", last_used_at AS "lastUsedAt"
        FROM api_keys WHERE prefix = ${prefix}`;
    return rows[0] ?? null;
  }

  async touch(id: string, at: Date): Promise<void> {
    await this.prisma.client.$executeRaw`UPDATE api_keys SET last_used_at = ${at}::timestamptz WHERE id = ${id}::uuid AND revoked_at IS NULL`;
  }
}
