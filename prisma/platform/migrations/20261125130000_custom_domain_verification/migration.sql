-- Custom domains need proof of control (issue 20, item 8). Before this migration attaching a
-- name was enough for the edge to serve it and for the sign-in service to trust it, so anyone
-- could take `shop.example.com` and its rightful owner then got 409 domain_taken.
--
-- A row of `domains` is now a CLAIM: it carries a per-claim random token the owner publishes as
-- TXT `_slipway-challenge.<hostname>` = `slipway-verify=<token>`, and only a claim whose record
-- was found (`verified_at` set) routes at the edge and becomes trusted origins. Several
-- applications may claim one name while unverified; the database keeps at most one VERIFIED
-- holder per name (partial unique index below), so the first to verify wins.
--
-- Existing rows: attached without proof, so they become unverified claims with a fresh token
-- (the owner sees the record to set in the dashboard and presses Verify), and the trusted
-- origins they produced are removed. Their edges stop serving them on their next route reload.
ALTER TABLE "domains" ADD COLUMN "verification_token" TEXT;
-- 2 × 122 random bits from gen_random_uuid() (core Postgres, no extension): 64 hex characters,
-- the length of the tokens the gateway makes (32 random bytes).
UPDATE "domains" SET "verification_token" = replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', '');
ALTER TABLE "domains" ALTER COLUMN "verification_token" SET NOT NULL;
ALTER TABLE "domains" ADD COLUMN "verified_at" TIMESTAMPTZ(3),
                      ADD COLUMN "checked_at" TIMESTAMPTZ(3),
                      ADD COLUMN "check_error" TEXT;

DELETE FROM "trusted_origins" WHERE "source" = 'custom_domain';

-- One claim per name per application; several applications may claim a name...
DROP INDEX "domains_hostname_key";
CREATE UNIQUE INDEX "domains_application_id_hostname_key" ON "domains"("application_id", "hostname");
CREATE INDEX "domains_hostname_idx" ON "domains"("hostname");
-- ...but at most one of them holds it verified (schema.prisma cannot express a partial index).
CREATE UNIQUE INDEX "domains_one_verified_holder" ON "domains"("hostname") WHERE "verified_at" IS NOT NULL;
