-- The worker registry: one row per worker process, written when it starts, refreshed
-- on its heartbeat (once per interval, whatever it runs) and marked stopped when it
-- shuts down gracefully. A row whose heartbeat is a few intervals old is a lost worker
-- (see backroom.core.workers); retention deletes rows not seen for a day.
CREATE TABLE workers (
    id           TEXT    NOT NULL PRIMARY KEY,
    hostname     TEXT    NOT NULL,
    pid          INTEGER NOT NULL,
    queues       TEXT    NOT NULL,  -- a JSON array; empty: every queue
    concurrency  INTEGER NOT NULL,
    heartbeat_ms INTEGER NOT NULL,
    started_at   INTEGER NOT NULL,
    heartbeat_at INTEGER NOT NULL,
    stopped_at   INTEGER
);
CREATE INDEX workers_heartbeat ON workers (heartbeat_at);
