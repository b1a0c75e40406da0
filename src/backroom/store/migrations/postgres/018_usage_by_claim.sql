-- LLM usage keyed by the claim that made the call (job, lease token) instead of the
-- attempt number: the SQLite migration of the same number, where the reasons are.
--
-- Existing rows keep their figures. Each takes the token of the call it settled: the
-- job's call of the same attempt settled at the usage's time (the latest such claim
-- if several). A row with no such call (recorded before migration 012, or its job's
-- calls pruned) takes -attempt: unique for its job, and never a claim's token (> 0).
ALTER TABLE llm_usage ADD COLUMN lease_token BIGINT;
UPDATE llm_usage AS used SET lease_token = COALESCE(
    (SELECT max(call.lease_token) FROM llm_calls AS call
     WHERE call.job_id = used.job_id AND call.attempt = used.attempt
       AND call.state <> 'open' AND call.settled_at = used.at),
    -used.attempt
);
ALTER TABLE llm_usage ALTER COLUMN lease_token SET NOT NULL;
ALTER TABLE llm_usage DROP CONSTRAINT llm_usage_pkey;
ALTER TABLE llm_usage ADD PRIMARY KEY (job_id, lease_token);
