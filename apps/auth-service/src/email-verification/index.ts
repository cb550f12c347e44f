export { EmailVerificationModule } from './email-verification.module.js';
export { EmailVerificationService } from './email-verification.service.js';
