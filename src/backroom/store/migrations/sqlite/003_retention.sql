-- Retention: finding finished jobs by age (the PostgreSQL migration of the same number
-- also tunes autovacuum; SQLite reuses the pages that pruning frees without one).
--
-- `Store.prune` (run by `backroom prune` and the workers' retention sweep) looks for
-- jobs of given final states that finished before a cutoff. Only finished jobs have
-- a finished_at, so the index holds none of the queued or running ones.
CREATE INDEX jobs_finished ON jobs (state, finished_at) WHERE finished_at IS NOT NULL;
