-- Paused queues and lanes: the SQLite migration of the same number
-- (migrations/sqlite/006_pauses.sql) in PostgreSQL types.
CREATE TABLE pauses (
    kind      TEXT   NOT NULL CHECK (kind IN ('queue', 'lane')),
    name      TEXT   NOT NULL,
    paused_at BIGINT NOT NULL,
    PRIMARY KEY (kind, name)
);
