-- Choosing the application to deploy inside a monorepo (issue 32): a deploy may name the
-- directory of its source that holds the application (`rootDirectory`, as Vercel's "Root
-- Directory"). It is kept with the deployment, so every attempt at it (a retry, a task handed
-- back to the queue) builds the same directory; the build worker reads it with the start.
ALTER TABLE "deployments" ADD COLUMN "root_directory" TEXT;
-- The gateway checks the value (libs/contract `checkRootDirectory`); the database refuses
-- anything else too, so no other writer can hand the build an absolute path or a `..`.
ALTER TABLE "deployments" ADD CONSTRAINT "deployments_root_directory_relative" CHECK (
  "root_directory" IS NULL OR (
    length("root_directory") <= 200
    AND "root_directory" ~ '^[A-Za-z0-9._@+-]+(/[A-Za-z0-9._@+-]+)*$'
    AND "root_directory" !~ '(^|/)\.\.?(/|$)'
  )
);
