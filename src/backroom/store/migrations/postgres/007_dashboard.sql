-- The dashboard: read-only API keys, the secret that signs its session cookies, and the
-- indexes that keep its pages fast on millions of jobs.
ALTER TABLE api_keys ADD COLUMN read_only boolean NOT NULL DEFAULT false;

-- One row per named secret, made once by whichever process needs it first.
CREATE TABLE server_secrets (
    name   text PRIMARY KEY,
    secret text NOT NULL
);

-- Queue depths: the queued and running jobs only.
CREATE INDEX jobs_active_queue ON jobs (queue, state, tenant) WHERE state IN ('queued', 'running');
-- Throughput charts: the finishes in a window, read from the index alone.
CREATE INDEX jobs_finished_at ON jobs (finished_at, queue, state, tenant)
    WHERE finished_at IS NOT NULL;
-- Dead letters grouped by task and error class, and a tenant's failed jobs.
CREATE INDEX jobs_dead_letters ON jobs (tenant, task, error_kind) WHERE state = 'failed';
