-- The worker registry: the SQLite migration of the same number
-- (migrations/sqlite/013_workers.sql) in PostgreSQL types.
CREATE TABLE workers (
    id           TEXT    NOT NULL PRIMARY KEY,
    hostname     TEXT    NOT NULL,
    pid          INTEGER NOT NULL,
    queues       TEXT    NOT NULL,  -- a JSON array, as text like every JSON column
    concurrency  INTEGER NOT NULL,
    heartbeat_ms BIGINT  NOT NULL,
    started_at   BIGINT  NOT NULL,
    heartbeat_at BIGINT  NOT NULL,
    stopped_at   BIGINT
);
CREATE INDEX workers_heartbeat ON workers (heartbeat_at);
