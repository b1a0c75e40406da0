-- A lane's health (migrations/sqlite/011_lane_health.sql) in PostgreSQL types.
ALTER TABLE lane_states ADD COLUMN refusal_streak INTEGER NOT NULL DEFAULT 0;
ALTER TABLE lane_states ADD COLUMN failure_streak INTEGER NOT NULL DEFAULT 0;
