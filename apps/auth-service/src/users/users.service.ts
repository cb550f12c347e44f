import { Injectable } from '@nestjs/common';
import { AuthError } from '../common/auth-error.js';
import type { AuthResult } from '../common/auth-result.js';
import type { RequestMeta } from '../common/auth-request.js';
import { SessionsService } from '../sessions/sessions.service.js';
import { TenantsService } from '../tenants/tenants.service.js';
import type { Tenant } from '../tenants/tenant.js';
import { UsersRepository } from './users.repository.js';

@Injectable()
export class UsersService {
  constructor(
    private readonly tenants: TenantsService,
    private readonly users: UsersRepository,
    private readonly sessions: SessionsService,
  ) {}

  async update(tenant: Tenant, meta: RequestMeta, input: { name?: string | undefined; image?: string | null | undefined; email?: unknown }): Promise<AuthResult> {
    const current = await this.sessions.require(tenant, meta);
    if (input.email !== undefined) throw new AuthError(400, 'EMAIL_CAN_NOT_BE_UPDATED', 'Email can not be updated');
    await this.users.update(this.tenants.db(tenant), current.user.id, { name: input.name, image: input.image });
    await this.sessions.invalidateUsers(tenant, [current.user.id]);
    return { body: { status: true } };
  }
}
