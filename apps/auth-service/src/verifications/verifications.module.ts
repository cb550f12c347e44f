import { Module } from '@nestjs/common';
import { VerificationsRepository } from './verifications.repository.js';

/** One-time tokens in the tenant's `service_auth.verifications` (password reset, email verification, OAuth state). */
@Module({ providers: [VerificationsRepository], exports: [VerificationsRepository] })
export class VerificationsModule {}
