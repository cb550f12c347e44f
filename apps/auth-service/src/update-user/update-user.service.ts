import { Injectable } from '@nestjs/common';
import { AuthError, type AuthResult } from '../common/index.js';
import type { RequestMeta } from '../pipeline/index.js';
import { SessionsService } from '../sessions/index.js';
import { TenantsService, type Tenant } from '../tenants/index.js';
import { UsersRepository } from '../users/index.js';

/** `POST /update-user`: the signed-in user's name and image. */
@Injectable()
export class UpdateUserService {
  constructor(
    private readonly tenants: TenantsService,
    private readonly users: UsersRepository,
    private readonly sessions: SessionsService,
  ) {}

  async update(
    tenant: Tenant,
    meta: RequestMeta,
    input: { name?: string | undefined; image?: string | null | undefined; email?: unknown },
  ): Promise<AuthResult> {
    const current = await this.sessions.require(tenant, meta);
    if (input.email !== undefined) throw new AuthError(400, 'EMAIL_CAN_NOT_BE_UPDATED', 'Email can not be updated');
    await this.users.update(this.tenants.db(tenant), current.user.id, { name: input.name, image: input.image });
    await this.sessions.invalidateUsers(tenant, [current.user.id]);
    return { body: { status: true } };
  }
}
