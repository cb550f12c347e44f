import { Global, Module } from '@nestjs/common';
import { EmailVerificationService } from '../email-verification/email-verification.service.js';
import { PasswordHasher } from '../password/password-hasher.js';
import { RateLimitService } from '../rate-limit/rate-limit.service.js';
import { SessionCache } from '../sessions/session-cache.js';
import { SessionsRepository } from '../sessions/sessions.repository.js';
import { SessionsService } from '../sessions/sessions.service.js';
import { TenantPools } from '../tenants/tenant-pools.js';
import { TenantRepository } from '../tenants/tenant.repository.js';
import { TenantsService } from '../tenants/tenants.service.js';
import { TokensRepository } from '../tokens/tokens.repository.js';
import { TokensService } from '../tokens/tokens.service.js';
import { UsersRepository } from '../users/users.repository.js';
import { StrictRouting } from '../routing/strict-routing.js';
import { AuthPipelineMiddleware } from './auth-pipeline.middleware.js';
import { MailerService } from './mailer.service.js';
import { VerificationsRepository } from './verifications.repository.js';

const shared = [
  StrictRouting,
  TenantRepository,
  TenantPools,
  TenantsService,
  RateLimitService,
  AuthPipelineMiddleware,
  UsersRepository,
  SessionsRepository,
  SessionCache,
  SessionsService,
  TokensRepository,
  TokensService,
  PasswordHasher,
  VerificationsRepository,
  MailerService,
  EmailVerificationService,
];

/** Services every feature of the sign-in service uses (tenant resolution, sessions, tokens, mail). */
@Global()
@Module({ providers: shared, exports: shared })
export class SharedModule {}
