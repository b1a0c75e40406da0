-- Lanes, LLM usage and daily budgets: the SQLite migration of the same number
-- (migrations/sqlite/004_lanes_usage.sql) in PostgreSQL types.

-- The lane a job's calls count against (NULL: none), and the tokens its running
-- attempt was granted in it (NULL: no grant held). A lane's calls in flight are its
-- running jobs that hold a grant, so a lease that ends, however it ends, frees its slot.
ALTER TABLE jobs ADD COLUMN lane TEXT;
ALTER TABLE jobs ADD COLUMN lane_grant BIGINT;
CREATE INDEX jobs_lane_grants ON jobs (lane) WHERE state = 'running' AND lane_grant IS NOT NULL;

-- One row per lane, shared by every worker (each call locks it): its limits as last
-- configured, its buckets in credits (1/60,000 of a request or token), the pause,
-- and the token estimate of its last call (for the claim's guess of how many fit).
CREATE TABLE lane_states (
    name                TEXT    PRIMARY KEY,
    max_concurrency     INTEGER,
    requests_per_minute INTEGER,
    tokens_per_minute   INTEGER,
    request_credit      BIGINT  NOT NULL,
    token_credit        BIGINT  NOT NULL,
    paused_until        BIGINT  NOT NULL DEFAULT 0,
    updated_at          BIGINT  NOT NULL,
    call_tokens         BIGINT  NOT NULL DEFAULT 0
);

-- What each attempt's LLM call used and cost. Kept when old jobs are pruned: it is
-- the spend record. Money is whole pico-dollars (10^-12 USD); a NULL cost is a model
-- without prices.
CREATE TABLE llm_usage (
    job_id         BIGINT  NOT NULL,
    attempt        INTEGER NOT NULL,
    tenant         TEXT    NOT NULL,
    model          TEXT    NOT NULL,
    prompt_version TEXT,
    input_tokens   BIGINT  NOT NULL,
    cached_tokens  BIGINT  NOT NULL,
    output_tokens  BIGINT  NOT NULL,
    cost_pico_usd  BIGINT,
    at             BIGINT  NOT NULL,
    PRIMARY KEY (job_id, attempt)
);
CREATE INDEX llm_usage_tenant ON llm_usage (tenant, at);
CREATE INDEX llm_usage_at ON llm_usage (at);

-- Daily budgets become exact: whole pico-dollars instead of a float of dollars.
ALTER TABLE tenants ADD COLUMN daily_budget_pico_usd BIGINT;
UPDATE tenants SET daily_budget_pico_usd = round(daily_budget_usd::numeric * 1e12)::bigint
WHERE daily_budget_usd IS NOT NULL;
ALTER TABLE tenants DROP COLUMN daily_budget_usd;
