-- Storage with a lifecycle (issue 27): what an owner stores is counted against its plan's storage
-- quota. A release's artifact size was only in its spec (`spec.artifact.bytes`, written by the
-- package step); it becomes a column, so an owner's usage is one indexed sum.
ALTER TABLE "releases" ADD COLUMN "artifact_bytes" BIGINT NOT NULL DEFAULT 0;
UPDATE "releases" SET "artifact_bytes" = ("spec"->'artifact'->>'bytes')::bigint
  WHERE jsonb_typeof("spec"->'artifact'->'bytes') = 'number';
