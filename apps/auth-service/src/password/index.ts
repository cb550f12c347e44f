export { PASSWORD_MAX_BYTES, PASSWORD_MIN_LENGTH, PasswordHasher } from './password-hasher.js';
export { PasswordModule } from './password.module.js';
export { PasswordService } from './password.service.js';
