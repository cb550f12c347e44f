-- Two-factor (issue 33, Better Auth's `twoFactor` table), one row per enrolled user. Nothing here
-- is readable as a secret: `secret` is a keyring envelope (libs/crypto, binding
-- two-factor-secret:<appId>:<userId>), `backup_codes` holds SHA-256 hex digests of the unused
-- codes only (a used code is removed from the array, atomically). Challenges, emailed codes and
-- trusted devices live in service_auth.verifications (apps/auth-service/docs/plugins/two-factor.md).
CREATE TABLE service_auth.two_factors (
    id              TEXT PRIMARY KEY,
    user_id         TEXT NOT NULL UNIQUE REFERENCES service_auth.users (id) ON DELETE CASCADE,
    secret          BYTEA NOT NULL,
    backup_codes    TEXT[] NOT NULL DEFAULT '{}',
    -- false until the first code from the authenticator app is verified (Better Auth's `verified`).
    verified        BOOLEAN NOT NULL DEFAULT false,
    -- The TOTP time step (unix seconds / 30) of the last accepted code: a code is accepted once.
    last_totp_step  BIGINT,
    created_at      TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    updated_at      TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);
