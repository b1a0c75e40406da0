-- A lane's health, shared by every worker (see backroom.core.lane_health): the 429s in
-- a row (the backoff of a 429 that names no wait grows with them) and the server
-- errors and timeouts in a row (at 5 the lane's breaker opens).
ALTER TABLE lane_states ADD COLUMN refusal_streak INTEGER NOT NULL DEFAULT 0;
ALTER TABLE lane_states ADD COLUMN failure_streak INTEGER NOT NULL DEFAULT 0;
