-- Only the platform's own role connects to the platform database (issue 17, credentials as a
-- second wall). Postgres gives PUBLIC — every role on the server, including each application's
-- own role (libs/sign-in-core) — CONNECT and TEMPORARY on every new database: without this an
-- application role could connect here, take the platform's advisory locks (migrations,
-- provisioning) and create temporary tables. The database's name is the operator's choice.
DO $$
DECLARE
  db text := current_database();
BEGIN
  EXECUTE format('REVOKE CONNECT, TEMPORARY ON DATABASE %I FROM PUBLIC', db);
  -- Migrations run as the role the services connect as (DATABASE_URL). Its owner keeps these
  -- privileges anyway; a superuser or a role granted them explicitly keeps them too.
  EXECUTE format('GRANT CONNECT, TEMPORARY ON DATABASE %I TO %I', db, current_user);
  -- A non-owner's REVOKE only warns: fail closed instead of leaving the database open.
  IF has_database_privilege('public', db, 'CONNECT') OR has_database_privilege('public', db, 'TEMPORARY') THEN
    RAISE EXCEPTION 'cannot revoke CONNECT and TEMPORARY on database % from PUBLIC: role % does not own it', db, current_user
      USING HINT = format('As its owner or a superuser run: ALTER DATABASE %I OWNER TO %I; then migrate again.', db, current_user);
  END IF;
END
$$;
