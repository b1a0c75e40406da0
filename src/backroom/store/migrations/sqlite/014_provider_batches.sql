-- Batch offload (see backroom.core.provider_batch): provider batches, stored as an
-- intent before anything is uploaded, and the lines of the offloaded jobs they hold.

CREATE TABLE provider_batches (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    name              TEXT    NOT NULL UNIQUE,
    provider          TEXT    NOT NULL,
    lane              TEXT    NOT NULL,
    phase             TEXT    NOT NULL CHECK (phase IN ('intent', 'open', 'closed')),
    provider_batch_id TEXT,
    provider_status   TEXT,
    total             INTEGER NOT NULL DEFAULT 0,
    succeeded         INTEGER NOT NULL DEFAULT 0,
    failed            INTEGER NOT NULL DEFAULT 0,
    polls             INTEGER NOT NULL DEFAULT 0,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    due_at            INTEGER NOT NULL
);
CREATE INDEX provider_batches_due ON provider_batches (due_at) WHERE phase <> 'closed';

-- One line per offloaded claim; live while its job runs under lease_token. A NULL
-- batch_id waits for a batch.
CREATE TABLE batch_lines (
    job_id      INTEGER NOT NULL,
    lease_token INTEGER NOT NULL,
    lane        TEXT    NOT NULL,
    batch_id    INTEGER,
    handed_at   INTEGER NOT NULL,
    PRIMARY KEY (job_id, lease_token)
);
CREATE INDEX batch_lines_batch ON batch_lines (batch_id);
CREATE INDEX batch_lines_waiting ON batch_lines (handed_at) WHERE batch_id IS NULL;
