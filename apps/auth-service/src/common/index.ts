// Helpers every feature may use; nothing here imports a feature folder.
export { AuthError, AuthErrors } from './auth-error.js';
export { AuthErrorFilter, sendAuthError } from './auth-error.filter.js';
export { reply, type AuthResult } from './auth-result.js';
export { emailField } from './email-field.js';
export { newId } from './ids.js';
export { optionalUrl, parseBody } from './validation.js';
export { withQuery } from './with-query.js';
export { serverUnavailable, throughRestart } from './database-restart.js';
