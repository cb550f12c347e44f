import { Inject, Injectable } from '@nestjs/common';
import { decryptEnvelopeToString, encryptEnvelope, envelopeBinding, randomAlphanumeric, type Keyring } from '@slipway/crypto';
import { AuthErrors, type AuthResult } from '../common/index.js';
import { PasswordHasher } from '../password/index.js';
import type { RequestMeta } from '../pipeline/index.js';
import { KEYRING } from '../platform/index.js';
import { SessionsService } from '../sessions/index.js';
import { TenantsService, type Tenant, type TenantDb } from '../tenants/index.js';
import { UsersRepository, type UserRow } from '../users/index.js';
import type { EnableInput } from './dto/two-factor.dto.js';
import { TwoFactorChallenges } from './two-factor-challenge.service.js';
import { TwoFactorErrors } from './two-factor.errors.js';
import { TwoFactorRepository } from './two-factor.repository.js';
import { totpURI } from './totp.js';
import { backupCodeDigest } from './two-factor-cookies.js';

/** Better Auth's backup codes: 10 of 10 characters [A-Za-z0-9], shown as `xxxxx-xxxxx`. */
function newBackupCodes(): string[] {
  return Array.from({ length: 10 }, () => randomAlphanumeric(10)).map((c) => `${c.slice(0, 5)}-${c.slice(5)}`);
}

/** Enrolment and its management, for the signed-in user, each behind their password. */
@Injectable()
export class TwoFactorService {
  constructor(
    @Inject(KEYRING) private readonly keyring: Keyring,
    private readonly tenants: TenantsService,
    private readonly users: UsersRepository,
    private readonly hasher: PasswordHasher,
    private readonly sessions: SessionsService,
    private readonly twoFactors: TwoFactorRepository,
    private readonly challenges: TwoFactorChallenges,
  ) {}

  /**
   * `POST /two-factor/enable`: a TOTP secret and backup codes; two-factor turns on with the first
   * verified code (Better Auth's `skipVerificationOnEnable: false`). `method: "otp"` turns on
   * emailed codes at once.
   */
  async enable(tenant: Tenant, meta: RequestMeta, input: EnableInput): Promise<AuthResult> {
    const { user } = await this.sessions.require(tenant, meta);
    const db = this.tenants.db(tenant);
    await this.checkPassword(db, user, input.password);
    if (input.method === 'otp') {
      await this.twoFactors.enableOtpOnly(db, user.id);
      await this.sessions.invalidateUsers(tenant, [user.id]);
      return { body: { method: 'otp' } };
    }
    const secret = randomAlphanumeric(32);
    const backupCodes = newBackupCodes();
    const sealed = encryptEnvelope(this.keyring, secret, envelopeBinding.twoFactorSecret(tenant.applicationId, user.id));
    if (
      !(await this.twoFactors.enrol(
        db,
        user.id,
        sealed,
        backupCodes.map((c) => backupCodeDigest(tenant, user.id, c)),
      ))
    )
      throw TwoFactorErrors.totpAlreadyEnabled();
    return { body: { method: 'totp', totpURI: totpURI(secret, input.issuer || this.issuer(tenant), user.email), backupCodes } };
  }

  /** `POST /two-factor/get-totp-uri`. */
  async totpURI(tenant: Tenant, meta: RequestMeta, password: string): Promise<AuthResult> {
    const { user } = await this.sessions.require(tenant, meta);
    const db = this.tenants.db(tenant);
    const row = await this.twoFactors.findByUser(db, user.id);
    if (!row) throw TwoFactorErrors.totpNotEnabled();
    await this.checkPassword(db, user, password);
    const secret = decryptEnvelopeToString(this.keyring, row.secret, envelopeBinding.twoFactorSecret(tenant.applicationId, user.id));
    return { body: { totpURI: totpURI(secret, this.issuer(tenant), user.email) } };
  }

  /** `POST /two-factor/generate-backup-codes`: new codes; the old ones stop working. */
  async generateBackupCodes(tenant: Tenant, meta: RequestMeta, password: string): Promise<AuthResult> {
    const { user } = await this.sessions.require(tenant, meta);
    if (!user.two_factor_enabled) throw TwoFactorErrors.notEnabled();
    const db = this.tenants.db(tenant);
    await this.checkPassword(db, user, password);
    const backupCodes = newBackupCodes();
    if (
      !(await this.twoFactors.replaceBackupCodes(
        db,
        user.id,
        backupCodes.map((c) => backupCodeDigest(tenant, user.id, c)),
      ))
    )
      throw TwoFactorErrors.notEnabled();
    return { body: { status: true, backupCodes } };
  }

  /** `POST /two-factor/disable`: the secret, the backup codes and every trusted device of the user go. */
  async disable(tenant: Tenant, meta: RequestMeta, password: string): Promise<AuthResult> {
    const { user } = await this.sessions.require(tenant, meta);
    const db = this.tenants.db(tenant);
    await this.checkPassword(db, user, password);
    await this.twoFactors.disable(db, user.id);
    const cleared = await this.challenges.forgetDevices(tenant, user.id);
    await this.sessions.invalidateUsers(tenant, [user.id]);
    return { body: { status: true }, cookies: [cleared] };
  }

  /** The name authenticator apps show: the owner's `issuer`, else the application's slug. */
  private issuer(tenant: Tenant): string {
    return tenant.settings.plugins?.twoFactor?.issuer || tenant.slug;
  }

  private async checkPassword(db: TenantDb, user: UserRow, password: string): Promise<void> {
    if (!(await this.hasher.verify(password, await this.users.passwordHashOf(db, user.id)))) throw AuthErrors.invalidPassword();
  }
}
