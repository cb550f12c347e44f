-- Backups and restore (issue 31). The embedded Postgres archives its WAL continuously and takes
-- base backups on a schedule; both go, sealed, to the blob store. Restoring an application's
-- database replays a base backup and the WAL to a point in time in a scratch server and copies
-- that one database back. These tables are the catalogue: what was taken, where it is, what a
-- restore did.

-- A base backup of the whole server (`base`), or a named point an owner or operator marked to
-- restore to later (`restore_point`, for one application or the whole platform).
CREATE TABLE "backups" (
  "id" UUID NOT NULL DEFAULT gen_random_uuid() PRIMARY KEY,
  "kind" TEXT NOT NULL CHECK ("kind" IN ('base', 'restore_point')),
  "status" TEXT NOT NULL CHECK ("status" IN ('running', 'succeeded', 'failed')),
  "trigger" TEXT NOT NULL CHECK ("trigger" IN ('schedule', 'operator', 'owner')),
  "application_id" UUID REFERENCES "applications"("id") ON DELETE CASCADE,
  "label" TEXT,
  "blob_key" TEXT,
  "size_bytes" BIGINT,
  "wal_start" TEXT,
  "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "finished_at" TIMESTAMPTZ(3),
  "error" TEXT
);
CREATE INDEX "backups_kind_finished_at_idx" ON "backups"("kind", "finished_at");
CREATE INDEX "backups_application_id_idx" ON "backups"("application_id");

-- Each WAL file the server archived and the backup service sealed into the blob store.
CREATE TABLE "backup_wal" (
  "name" TEXT NOT NULL PRIMARY KEY,
  "size_bytes" BIGINT NOT NULL,
  "archived_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- An owner's restore of their application's database: to a point in time, in place (the app
-- keeps its DATABASE_URL; the database it replaced is kept under `kept_database`) or into a new
-- database beside it.
CREATE TABLE "database_restores" (
  "id" UUID NOT NULL DEFAULT gen_random_uuid() PRIMARY KEY,
  "application_id" UUID NOT NULL REFERENCES "applications"("id") ON DELETE CASCADE,
  "target_time" TIMESTAMPTZ(3) NOT NULL,
  "mode" TEXT NOT NULL CHECK ("mode" IN ('in_place', 'new')),
  "status" TEXT NOT NULL CHECK ("status" IN ('queued', 'running', 'succeeded', 'failed')),
  "step" TEXT,
  "database_name" TEXT,
  "kept_database" TEXT,
  "size_bytes" BIGINT,
  "error" TEXT,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "started_at" TIMESTAMPTZ(3),
  "finished_at" TIMESTAMPTZ(3)
);
CREATE INDEX "database_restores_application_id_created_at_idx" ON "database_restores"("application_id", "created_at");
-- One restore at a time per application, held by the database.
CREATE UNIQUE INDEX "database_restores_one_active" ON "database_restores"("application_id") WHERE "status" IN ('queued', 'running');
