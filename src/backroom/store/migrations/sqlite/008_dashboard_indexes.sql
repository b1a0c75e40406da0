-- Indexes the dashboard's benchmark asked for (bench/dashboard_render.py, 1,000,000 jobs).
-- Queue depths from the index alone: the queued and running jobs only.
CREATE INDEX jobs_depth ON jobs (queue, state, tenant, run_at) WHERE state IN ('queued', 'running');
-- Dead letters grouped by task and error class in index order, from the index alone.
DROP INDEX jobs_dead_letters;
CREATE INDEX jobs_dead_letters ON jobs (task, error_kind, tenant) WHERE state = 'failed';
