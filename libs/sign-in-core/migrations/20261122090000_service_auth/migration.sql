-- The sign-in service's tables inside an application's own database. Plain snake_case so the
-- application can join its own tables on service_auth.users(id).
CREATE SCHEMA IF NOT EXISTS service_auth;

CREATE TABLE service_auth.users (
    id             TEXT PRIMARY KEY,
    name           TEXT NOT NULL,
    email          TEXT NOT NULL,
    email_verified BOOLEAN NOT NULL DEFAULT false,
    image          TEXT,
    created_at     TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    updated_at     TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_lower_key ON service_auth.users (lower(email));

CREATE TABLE service_auth.accounts (
    id                        TEXT PRIMARY KEY,
    user_id                   TEXT NOT NULL REFERENCES service_auth.users(id) ON DELETE CASCADE,
    provider_id               TEXT NOT NULL,
    account_id                TEXT NOT NULL,
    password                  TEXT,
    access_token              TEXT,
    refresh_token             TEXT,
    id_token                  TEXT,
    access_token_expires_at   TIMESTAMPTZ(3),
    refresh_token_expires_at  TIMESTAMPTZ(3),
    scope                     TEXT,
    created_at                TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    updated_at                TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX accounts_provider_account_key ON service_auth.accounts (provider_id, account_id);
CREATE INDEX accounts_user_id_idx ON service_auth.accounts (user_id);

CREATE TABLE service_auth.sessions (
    id          TEXT PRIMARY KEY,
    token_hash  TEXT NOT NULL UNIQUE,
    user_id     TEXT NOT NULL REFERENCES service_auth.users(id) ON DELETE CASCADE,
    expires_at  TIMESTAMPTZ(3) NOT NULL,
    ip_address  TEXT,
    user_agent  TEXT,
    created_at  TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    updated_at  TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);
CREATE INDEX sessions_user_id_idx ON service_auth.sessions (user_id);

CREATE TABLE service_auth.verifications (
    id          TEXT PRIMARY KEY,
    identifier  TEXT NOT NULL,
    value       TEXT NOT NULL,
    expires_at  TIMESTAMPTZ(3) NOT NULL,
    created_at  TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    updated_at  TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);
CREATE INDEX verifications_identifier_idx ON service_auth.verifications (identifier);

-- Signing keys. private_key is an envelope (libs/crypto, binding signing-key:<appId>:<kid>).
-- A key signs from activates_at until retires_at; JWKS lists it until its last token expired.
CREATE TABLE service_auth.jwks (
    id           TEXT PRIMARY KEY,
    public_key   TEXT NOT NULL,
    private_key  BYTEA NOT NULL,
    alg          TEXT NOT NULL DEFAULT 'EdDSA',
    crv          TEXT NOT NULL DEFAULT 'Ed25519',
    created_at   TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    activates_at TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    retires_at   TIMESTAMPTZ(3)
);
