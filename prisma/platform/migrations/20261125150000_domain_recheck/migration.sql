-- Verified custom domains are re-checked periodically (issue 19, HTTPS): the gateway looks the
-- TXT record up again every DOMAIN_RECHECK_INTERVAL_MS and counts the definite failures in a row
-- (record gone or wrong value; a failed lookup counts nothing). After DOMAIN_RECHECK_FAILURES of
-- them the claim is unverified: the edges drop its route and its certificate.
ALTER TABLE "domains" ADD COLUMN "check_failures" INTEGER NOT NULL DEFAULT 0;
-- The re-check picks the claims checked longest ago.
CREATE INDEX "domains_checked_at_idx" ON "domains"("checked_at");
