-- Fields the sign-in plugins (issue 33) add to the user and the session, as Better Auth's own
-- plugins add them: they sit on the hot read path (get-session, token), so they are columns of
-- users and sessions, read with the session in its one query. Each plugin's own tables come in
-- its own migration.
ALTER TABLE service_auth.users
    ADD COLUMN two_factor_enabled BOOLEAN NOT NULL DEFAULT false,   -- two-factor
    ADD COLUMN role               TEXT    NOT NULL DEFAULT 'user',  -- admin: 'user' | 'admin' (comma-separated list, as Better Auth)
    ADD COLUMN banned             BOOLEAN NOT NULL DEFAULT false,   -- admin
    ADD COLUMN ban_reason         TEXT,                             -- admin
    ADD COLUMN ban_expires        TIMESTAMPTZ(3);                   -- admin: null = for ever

ALTER TABLE service_auth.sessions
    ADD COLUMN active_organization_id TEXT,  -- organizations: the session's active organization
    ADD COLUMN impersonated_by        TEXT;  -- admin: the admin's user id while impersonating
