-- Nothing to do on SQLite: PostgreSQL's 021 indexes the jobs with a `webhook_url` for
-- the webhook dispatcher's read, which there reads a job's row only through it. SQLite
-- finds a job by its rowid in the table's own B-tree, within the process, as cheaply.
-- The numbers stay in step across dialects.
SELECT 1;
