-- Admin plugin (issue 33): who did what to which user. Written by the sign-in service's admin
-- routes (actor = the admin's user id) and by the owners' dashboard (actor = 'owner:<ownerId>'),
-- in the same transaction as the change. No foreign key to users: a removed user's trail stays.
CREATE TABLE service_auth.admin_audit (
    id             TEXT PRIMARY KEY,
    actor_user_id  TEXT NOT NULL,
    action         TEXT NOT NULL,   -- ban | unban | set-role | impersonate | stop-impersonating | revoke-session | revoke-sessions | remove | set-password | create-user | update-user
    target_user_id TEXT,
    details        JSONB NOT NULL DEFAULT '{}'::jsonb,
    ip_address     TEXT,
    created_at     TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);
CREATE INDEX admin_audit_target_idx ON service_auth.admin_audit (target_user_id, created_at);
CREATE INDEX admin_audit_created_idx ON service_auth.admin_audit (created_at);
