-- Organizations (Better Auth's organization plugin, issue 33): organizations, their members and
-- the invitations to join them. Plain snake_case, joinable on service_auth.users(id); deleting an
-- organization or a user deletes their memberships and invitations.
CREATE TABLE service_auth.organizations (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    slug        TEXT NOT NULL,
    logo        TEXT,
    metadata    TEXT,                                   -- JSON text, as Better Auth stores it
    created_at  TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX organizations_slug_key ON service_auth.organizations (slug);

CREATE TABLE service_auth.members (
    id               TEXT PRIMARY KEY,
    organization_id  TEXT NOT NULL REFERENCES service_auth.organizations(id) ON DELETE CASCADE,
    user_id          TEXT NOT NULL REFERENCES service_auth.users(id) ON DELETE CASCADE,
    role             TEXT NOT NULL,                     -- comma-separated roles, as Better Auth: 'owner', 'admin,member'
    created_at       TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX members_organization_user_key ON service_auth.members (organization_id, user_id);
CREATE INDEX members_user_id_idx ON service_auth.members (user_id);

CREATE TABLE service_auth.invitations (
    id               TEXT PRIMARY KEY,
    organization_id  TEXT NOT NULL REFERENCES service_auth.organizations(id) ON DELETE CASCADE,
    email            TEXT NOT NULL,                     -- lower-cased
    role             TEXT NOT NULL,
    status           TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'rejected', 'canceled')),
    expires_at       TIMESTAMPTZ(3) NOT NULL,
    inviter_id       TEXT NOT NULL REFERENCES service_auth.users(id) ON DELETE CASCADE,
    created_at       TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);
CREATE INDEX invitations_organization_id_idx ON service_auth.invitations (organization_id);
CREATE INDEX invitations_email_idx ON service_auth.invitations (email);

-- A session's active organization goes when the organization does (the UPDATE this cascades
-- into fires sessions_updated, so every replica's session cache drops those sessions).
ALTER TABLE service_auth.sessions
    ADD CONSTRAINT sessions_active_organization_fkey FOREIGN KEY (active_organization_id)
    REFERENCES service_auth.organizations(id) ON DELETE SET NULL;
CREATE INDEX sessions_active_organization_id_idx ON service_auth.sessions (active_organization_id) WHERE active_organization_id IS NOT NULL;

-- The session cache keeps the member's role with a session whose JWT carries it (claim
-- organizationRole), so a change to members by anyone (the application's own code, psql, a
-- cascade) announces the users concerned, exactly as sessions and users do (migration
-- 20261123090000). INSERT as well: a session may name an organization its user just (re)joined.
CREATE TRIGGER members_inserted AFTER INSERT ON service_auth.members REFERENCING NEW TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION service_auth.announce_change();
CREATE TRIGGER members_updated AFTER UPDATE ON service_auth.members REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION service_auth.announce_change();
CREATE TRIGGER members_deleted AFTER DELETE ON service_auth.members REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION service_auth.announce_change();
CREATE TRIGGER members_truncated AFTER TRUNCATE ON service_auth.members FOR EACH STATEMENT EXECUTE FUNCTION service_auth.announce_change();
