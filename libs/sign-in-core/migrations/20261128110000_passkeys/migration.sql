-- Passkeys (WebAuthn credentials), Better Auth's passkey plugin table in plain snake_case so the
-- application can join it on service_auth.users(id). public_key is the credential's COSE public
-- key, base64 (public by nature: it verifies, it cannot sign). A credential id is unique within the
-- application; the same authenticator may hold a credential for another application (another
-- database, another relying party), which is unrelated.
CREATE TABLE service_auth.passkeys (
    id             TEXT PRIMARY KEY,
    name           TEXT,
    public_key     TEXT NOT NULL,
    user_id        TEXT NOT NULL REFERENCES service_auth.users(id) ON DELETE CASCADE,
    credential_id  TEXT NOT NULL,
    counter        BIGINT NOT NULL DEFAULT 0,
    device_type    TEXT NOT NULL,             -- 'singleDevice' | 'multiDevice'
    backed_up      BOOLEAN NOT NULL DEFAULT false,
    transports     TEXT,                      -- comma-separated, as Better Auth stores them
    created_at     TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    aaguid         TEXT
);
CREATE UNIQUE INDEX passkeys_credential_id_key ON service_auth.passkeys (credential_id);
CREATE INDEX passkeys_user_id_idx ON service_auth.passkeys (user_id);
