-- Lanes, LLM usage and daily budgets (see backroom.core.lanes and backroom.core.usage).

-- The lane a job's calls count against (NULL: none), and the tokens its running
-- attempt was granted in it (NULL: no grant held). A lane's calls in flight are its
-- running jobs that hold a grant, so a lease that ends, however it ends, frees its slot.
ALTER TABLE jobs ADD COLUMN lane TEXT;
ALTER TABLE jobs ADD COLUMN lane_grant INTEGER;
CREATE INDEX jobs_lane_grants ON jobs (lane) WHERE state = 'running' AND lane_grant IS NOT NULL;
-- The claim passes over jobs of a paused or full lane: `lane` joins the claim's index
-- so that test reads no table rows.
DROP INDEX jobs_claim;
CREATE INDEX jobs_claim ON jobs (queue, tenant, priority DESC, run_at, id, lane)
    WHERE state = 'queued';

-- One row per lane, shared by every worker: its limits as last configured, its
-- buckets in credits (1/60,000 of a request or token), the pause, and the token
-- estimate of its last call (for the claim's guess of how many calls fit).
CREATE TABLE lane_states (
    name                TEXT    PRIMARY KEY,
    max_concurrency     INTEGER,
    requests_per_minute INTEGER,
    tokens_per_minute   INTEGER,
    request_credit      INTEGER NOT NULL,
    token_credit        INTEGER NOT NULL,
    paused_until        INTEGER NOT NULL DEFAULT 0,
    updated_at          INTEGER NOT NULL,
    call_tokens         INTEGER NOT NULL DEFAULT 0
);

-- What each attempt's LLM call used and cost. Kept when old jobs are pruned: it is
-- the spend record. Money is whole pico-dollars (10^-12 USD); a NULL cost is a model
-- without prices.
CREATE TABLE llm_usage (
    job_id         INTEGER NOT NULL,
    attempt        INTEGER NOT NULL,
    tenant         TEXT    NOT NULL,
    model          TEXT    NOT NULL,
    prompt_version TEXT,
    input_tokens   INTEGER NOT NULL,
    cached_tokens  INTEGER NOT NULL,
    output_tokens  INTEGER NOT NULL,
    cost_pico_usd  INTEGER,
    at             INTEGER NOT NULL,
    PRIMARY KEY (job_id, attempt)
);
CREATE INDEX llm_usage_tenant ON llm_usage (tenant, at);
CREATE INDEX llm_usage_at ON llm_usage (at);

-- Daily budgets become exact: whole pico-dollars instead of a float of dollars.
ALTER TABLE tenants ADD COLUMN daily_budget_pico_usd INTEGER;
UPDATE tenants SET daily_budget_pico_usd = CAST(ROUND(daily_budget_usd * 1e12) AS INTEGER)
WHERE daily_budget_usd IS NOT NULL;
ALTER TABLE tenants DROP COLUMN daily_budget_usd;
