-- The jobs that have a `webhook_url` of their own (PostgreSQL's 021 has the same): the
-- webhook dispatcher's read of terminal events, when no tenant subscribes, asks it
-- whether an event's job has one instead of reading the job's row.
CREATE INDEX jobs_hooked ON jobs (id) WHERE webhook_url IS NOT NULL;
