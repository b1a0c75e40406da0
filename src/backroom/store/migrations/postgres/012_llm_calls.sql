-- Paid LLM calls recorded before they are sent (see backroom.core.spend), usage the
-- provider did not report, and a tenant's default cap on one job's LLM cost.

-- One row per call, keyed by the claim that made it (a lease token is never reused,
-- unlike an attempt number after a deferral or a redrive). Money in pico-dollars; a
-- NULL reservation is a model without prices.
CREATE TABLE llm_calls (
    job_id            BIGINT  NOT NULL,
    lease_token       BIGINT  NOT NULL,
    attempt           INTEGER NOT NULL,
    tenant            TEXT    NOT NULL,
    provider          TEXT    NOT NULL,
    model             TEXT    NOT NULL,
    reserved_pico_usd BIGINT,
    state             TEXT    NOT NULL CHECK (state IN ('open', 'settled', 'charged')),
    response_id       TEXT,
    opened_at         BIGINT  NOT NULL,
    settled_at        BIGINT,
    PRIMARY KEY (job_id, lease_token)
);
-- The budget check sums a tenant's open reservations.
CREATE INDEX llm_calls_open ON llm_calls (tenant, opened_at) WHERE state = 'open';

-- true: the counts are backroom's estimate (no usage reported, or a call cut off).
ALTER TABLE llm_usage ADD COLUMN estimated BOOLEAN NOT NULL DEFAULT false;

ALTER TABLE tenants ADD COLUMN max_job_cost_pico_usd BIGINT;
