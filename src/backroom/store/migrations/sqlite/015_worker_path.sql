-- The worker's path, lighter (issue 13): PostgreSQL's migration of the same number
-- (migrations/postgres/015_worker_path.sql) also changes its feed trigger, which SQLite
-- has no counterpart of (its readers watch commits instead).

-- `jobs_finished` (state, finished_at) held nothing `jobs_finished_at` (finished_at,
-- queue, state, tenant) does not: retention's `finished_at < cutoff` reads that one.
-- Every finish wrote an entry in both.
DROP INDEX jobs_finished;
