import { AuthError } from '../common/index.js';

/** The passkey plugin's codes and messages (`PASSKEY_ERROR_CODES` of @better-auth/passkey). */
export const PasskeyErrors = {
  challengeNotFound: () => new AuthError(400, 'CHALLENGE_NOT_FOUND', 'Challenge not found'),
  notAllowedToRegister: () => new AuthError(401, 'YOU_ARE_NOT_ALLOWED_TO_REGISTER_THIS_PASSKEY', 'You are not allowed to register this passkey'),
  failedToVerifyRegistration: () => new AuthError(400, 'FAILED_TO_VERIFY_REGISTRATION', 'Failed to verify registration'),
  passkeyNotFound: (status = 401) => new AuthError(status, 'PASSKEY_NOT_FOUND', 'Passkey not found'),
  authenticationFailed: (status = 400) => new AuthError(status, 'AUTHENTICATION_FAILED', 'Authentication failed'),
  userNotFound: () => new AuthError(500, 'USER_NOT_FOUND', 'User not found'),
  /** better-auth's freshSessionMiddleware: registration needs a session signed in within a day. */
  sessionNotFresh: () => new AuthError(403, 'SESSION_NOT_FRESH', 'Session is not fresh'),
} as const;
