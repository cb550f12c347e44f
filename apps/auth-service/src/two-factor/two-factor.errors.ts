import { AuthError } from '../common/index.js';

/** Better Auth's `TWO_FACTOR_ERROR_CODES`, with the statuses its routes answer. */
export const TwoFactorErrors = {
  invalidCookie: () => new AuthError(401, 'INVALID_TWO_FACTOR_COOKIE', 'Invalid two factor cookie'),
  invalidCode: () => new AuthError(401, 'INVALID_CODE', 'Invalid code'),
  invalidBackupCode: () => new AuthError(401, 'INVALID_BACKUP_CODE', 'Invalid backup code'),
  otpExpired: () => new AuthError(400, 'OTP_HAS_EXPIRED', 'OTP has expired'),
  totpNotEnabled: () => new AuthError(400, 'TOTP_NOT_ENABLED', 'TOTP not enabled'),
  totpAlreadyEnabled: () => new AuthError(400, 'TOTP_ALREADY_ENABLED', 'TOTP is already enabled'),
  notEnabled: () => new AuthError(400, 'TWO_FACTOR_NOT_ENABLED', "Two factor isn't enabled"),
  backupCodesNotEnabled: () => new AuthError(400, 'BACKUP_CODES_NOT_ENABLED', "Backup codes aren't enabled"),
} as const;
