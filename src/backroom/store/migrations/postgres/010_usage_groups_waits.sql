-- Usage grouped by provider and by a job metadata key, why a queued job waits, and the
-- lane each attempt ran in: the SQLite migration of the same number in PostgreSQL types.

-- The provider each call went to (a model name alone merges providers), and its job's
-- metadata when the call ended: usage outlives pruned jobs, so it keeps its own copy.
ALTER TABLE llm_usage ADD COLUMN provider TEXT;
ALTER TABLE llm_usage ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
-- Calls recorded before: their job's lane (`provider/model`) names the provider.
UPDATE llm_usage SET
    provider = CASE WHEN strpos(jobs.lane, '/') > 1 THEN split_part(jobs.lane, '/', 1) END,
    metadata = jobs.metadata
FROM jobs WHERE jobs.id = llm_usage.job_id;

-- A queued job that could not start (its lane busy, its tenant's budget spent) says
-- why until it starts for real, and since when it has been due: the oldest-queued age
-- counts it, though its due time moved to when it may try again.
ALTER TABLE jobs ADD COLUMN wait_reason TEXT;
ALTER TABLE jobs ADD COLUMN waiting_since BIGINT;

-- The lane an attempt's call went to: a job with fallbacks changes lanes.
ALTER TABLE attempts ADD COLUMN lane TEXT;
