-- LLM usage keyed by the claim that made the call (job, lease token) instead of the
-- attempt number. A redrive starts a job's attempts again at 1, so keyed by attempt
-- the redriven job's calls replaced the usage (and the spend) of the calls before it;
-- a job's lease token only ever goes up, so no two of its calls share one.
--
-- Existing rows keep their figures. Each takes the token of the call it settled: the
-- job's call of the same attempt settled at the usage's time (the latest such claim
-- if several). A row with no such call (recorded before migration 012, or its job's
-- calls pruned) takes -attempt: unique for its job, and never a claim's token (> 0).
-- SQLite cannot change a primary key in place: the table is copied.
CREATE TABLE llm_usage_by_claim (
    job_id             INTEGER NOT NULL,
    lease_token        INTEGER NOT NULL,
    attempt            INTEGER NOT NULL,
    tenant             TEXT    NOT NULL,
    model              TEXT    NOT NULL,
    prompt_version     TEXT,
    input_tokens       INTEGER NOT NULL,
    cached_tokens      INTEGER NOT NULL,
    output_tokens      INTEGER NOT NULL,
    cost_pico_usd      INTEGER,
    at                 INTEGER NOT NULL,
    provider           TEXT,
    metadata           TEXT    NOT NULL DEFAULT '{}',
    estimated          INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (job_id, lease_token)
);

INSERT INTO llm_usage_by_claim (
    job_id, lease_token, attempt, tenant, model, prompt_version, input_tokens,
    cached_tokens, output_tokens, cost_pico_usd, at, provider, metadata, estimated,
    cache_write_tokens
)
SELECT used.job_id,
       COALESCE(
           (SELECT max(call.lease_token) FROM llm_calls AS call
            WHERE call.job_id = used.job_id AND call.attempt = used.attempt
              AND call.state <> 'open' AND call.settled_at = used.at),
           -used.attempt
       ),
       used.attempt, used.tenant, used.model, used.prompt_version, used.input_tokens,
       used.cached_tokens, used.output_tokens, used.cost_pico_usd, used.at,
       used.provider, used.metadata, used.estimated, used.cache_write_tokens
FROM llm_usage AS used;

DROP TABLE llm_usage;
ALTER TABLE llm_usage_by_claim RENAME TO llm_usage;
CREATE INDEX llm_usage_tenant ON llm_usage (tenant, at);
CREATE INDEX llm_usage_at ON llm_usage (at);
