import { Injectable } from '@nestjs/common';
import { CURRENT_SIGNING_KEY_SQL, PUBLISHED_KEYS_SQL, type SigningKeyRow } from '@slipway/sign-in-core';
import type { TenantDb } from '../tenants/index.js';

@Injectable()
export class TokensRepository {
  async currentKey(db: TenantDb): Promise<SigningKeyRow | null> {
    const { rows } = await db.query<SigningKeyRow>(CURRENT_SIGNING_KEY_SQL);
    return rows[0] ?? null;
  }

  async publishedKeys(db: TenantDb): Promise<{ id: string; public_key: string }[]> {
    const { rows } = await db.query<{ id: string; public_key: string }>(PUBLISHED_KEYS_SQL);
    return rows;
  }
}
