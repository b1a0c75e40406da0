-- Ids that never come back. SQLite gives a new row the largest id plus one, so after
-- retention deleted the newest jobs or events the next ones would reuse their ids: a
-- client polling an old job id would read another job, a feed cursor would skip the
-- new event, and a webhook receiver would drop its delivery as a duplicate (the
-- webhook-id is made of the event id). Retention raises each table's floor to its
-- largest id before deleting; inserts take ids above the floor.
CREATE TABLE id_floors (
    name  TEXT PRIMARY KEY,
    floor INTEGER NOT NULL
) WITHOUT ROWID;

INSERT INTO id_floors (name, floor) VALUES ('jobs', 0), ('job_events', 0);
