-- Previews and environments (issue 30). A preview is an application of its own (its own
-- deployments, releases, address and runtime), made by its parent's owner under the parent:
-- `{parent slug}--{preview name}` is its slug, so the edge routes it like any application. It
-- reads the parent's secrets (its `preview` scope), database and sign-in service, and is removed
-- with its parent or when it expires.
ALTER TABLE "applications"
  ADD COLUMN "parent_id" UUID REFERENCES "applications"("id") ON DELETE CASCADE,
  ADD COLUMN "preview_name" TEXT,
  ADD COLUMN "expires_at" TIMESTAMPTZ(3);
ALTER TABLE "applications" ADD CONSTRAINT "applications_preview_shape"
  CHECK (("parent_id" IS NULL) = ("preview_name" IS NULL) AND ("parent_id" IS NULL) = ("expires_at" IS NULL));
CREATE UNIQUE INDEX "applications_parent_id_preview_name_key" ON "applications"("parent_id", "preview_name");
CREATE INDEX "applications_expires_at_idx" ON "applications"("expires_at");

-- A secret's scope: `all` (production and previews; what /api/v1/secrets sets), `production` or
-- `preview`. An environment's own value wins over `all`.
ALTER TABLE "secrets" ADD COLUMN "scope" TEXT NOT NULL DEFAULT 'all';
ALTER TABLE "secrets" ADD CONSTRAINT "secrets_scope_check" CHECK ("scope" IN ('all', 'production', 'preview'));
DROP INDEX "secrets_application_id_name_key";
CREATE UNIQUE INDEX "secrets_application_id_name_scope_key" ON "secrets"("application_id", "name", "scope");

-- A preview's address, trusted by its parent's sign-in service while the preview exists.
ALTER TYPE "TrustedOriginSource" ADD VALUE 'preview';
