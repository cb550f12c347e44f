export { VerificationsModule } from './verifications.module.js';
export { VerificationsRepository } from './verifications.repository.js';
