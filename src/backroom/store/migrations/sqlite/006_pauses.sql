-- Queues and lanes a person paused for every worker (`backroom queues pause`, the
-- admin API, the dashboard): a claim takes no job of a paused queue or lane until it
-- is resumed. Unlike a lane's `paused_until` (a provider's 429), it never ends by itself.
CREATE TABLE pauses (
    kind      TEXT    NOT NULL CHECK (kind IN ('queue', 'lane')),
    name      TEXT    NOT NULL,
    paused_at INTEGER NOT NULL,
    PRIMARY KEY (kind, name)
);
