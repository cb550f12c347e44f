/**
 * An error in Better Auth's wire shape: status + `{code, message}`. The sign-in service's own
 * errors use this rather than the platform API's `{error, code, documentation}`.
 */
export class AuthError extends Error {
  override readonly name = 'AuthError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
    /** The body a client sees; `{code, message}` unless set (429 is `{message}` only). */
    readonly body: Record<string, unknown> = { code, message },
  ) {
    super(message);
  }
}

export const AuthErrors = {
  unauthorized: () => new AuthError(401, 'UNAUTHORIZED', 'Unauthorized'),
  invalidCredentials: () => new AuthError(401, 'INVALID_EMAIL_OR_PASSWORD', 'Invalid email or password'),
  userExists: () => new AuthError(422, 'USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL', 'User already exists. Use another email.'),
  invalidEmail: () => new AuthError(400, 'INVALID_EMAIL', 'Invalid email'),
  passwordTooShort: () => new AuthError(400, 'PASSWORD_TOO_SHORT', 'Password too short'),
  passwordTooLong: () => new AuthError(400, 'PASSWORD_TOO_LONG', 'Password too long'),
  invalidPassword: () => new AuthError(400, 'INVALID_PASSWORD', 'Invalid password'),
  invalidToken: (status = 400) => new AuthError(status, 'INVALID_TOKEN', 'Invalid token'),
  emailNotVerified: () => new AuthError(403, 'EMAIL_NOT_VERIFIED', 'Email not verified'),
  validation: (message: string) => new AuthError(400, 'VALIDATION_ERROR', message),
  notFound: () => new AuthError(404, 'NOT_FOUND', 'No sign-in service answers at this address'),
} as const;
