import { Module } from '@nestjs/common';
import { EmailVerificationController } from './email-verification.controller.js';

@Module({ controllers: [EmailVerificationController] })
export class EmailVerificationModule {}
