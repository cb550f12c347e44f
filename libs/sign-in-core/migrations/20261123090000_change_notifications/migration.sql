-- Change notifications for the sign-in service's session cache. Every UPDATE or DELETE of a
-- session or user (ours, the application's own code, a cascade, a manual fix in psql) commits a
-- NOTIFY on channel service_auth_changed carrying the affected user ids, comma-separated, or '*'
-- (everything: TRUNCATE, or more ids than a notification can carry). Every auth-service replica
-- that caches sessions of this database LISTENs and drops those users' cached sessions.
CREATE FUNCTION service_auth.announce_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids TEXT;
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify('service_auth_changed', '*');
        RETURN NULL;
    END IF;
    IF TG_TABLE_NAME = 'users' THEN
        SELECT string_agg(DISTINCT id, ',') INTO ids FROM old_rows;
    ELSE
        SELECT string_agg(DISTINCT user_id, ',') INTO ids FROM old_rows;
    END IF;
    IF ids IS NOT NULL THEN
        PERFORM pg_notify('service_auth_changed', CASE WHEN length(ids) > 7000 THEN '*' ELSE ids END);
    END IF;
    RETURN NULL;
END
$$;

-- A trigger with a transition table serves one event only: one trigger per event.
CREATE TRIGGER sessions_updated AFTER UPDATE ON service_auth.sessions REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION service_auth.announce_change();
CREATE TRIGGER sessions_deleted AFTER DELETE ON service_auth.sessions REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION service_auth.announce_change();
CREATE TRIGGER sessions_truncated AFTER TRUNCATE ON service_auth.sessions FOR EACH STATEMENT EXECUTE FUNCTION service_auth.announce_change();
CREATE TRIGGER users_updated AFTER UPDATE ON service_auth.users REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION service_auth.announce_change();
CREATE TRIGGER users_deleted AFTER DELETE ON service_auth.users REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION service_auth.announce_change();
CREATE TRIGGER users_truncated AFTER TRUNCATE ON service_auth.users FOR EACH STATEMENT EXECUTE FUNCTION service_auth.announce_change();
