-- Retention and vacuum: finding finished jobs by age, and cleaning up after them.
--
-- `Store.prune` (run by `backroom prune` and the workers' retention sweep) looks for
-- jobs of given final states that finished before a cutoff. Only finished jobs have
-- a finished_at, so the index holds none of the queued or running ones; the claim's
-- writes never touch it, and a job enters it once, when it ends.
CREATE INDEX jobs_finished ON jobs (state, finished_at) WHERE finished_at IS NOT NULL;

-- Autovacuum triggers by default once 20% of a table's rows are dead (10% changed for
-- ANALYZE). Job tables churn far faster than that suggests: a job row is rewritten at
-- its claim, each heartbeat and its finish; an attempt row once, when it ends; and
-- pruning deletes old rows of all of them in bulk. Waiting for 20% of a large table
-- lets dead rows bloat the indexes the claim walks, and leaves the planner's
-- statistics on the queued set stale. So vacuum and analyze after a few percent.
ALTER TABLE jobs SET (
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_analyze_scale_factor = 0.01,
    autovacuum_vacuum_insert_scale_factor = 0.02
);
ALTER TABLE attempts SET (
    autovacuum_vacuum_scale_factor = 0.05,
    autovacuum_analyze_scale_factor = 0.05,
    autovacuum_vacuum_insert_scale_factor = 0.05
);
ALTER TABLE job_events SET (
    autovacuum_vacuum_scale_factor = 0.05,
    autovacuum_analyze_scale_factor = 0.05,
    autovacuum_vacuum_insert_scale_factor = 0.05
);
ALTER TABLE once_records SET (
    autovacuum_vacuum_scale_factor = 0.05,
    autovacuum_analyze_scale_factor = 0.05
);
