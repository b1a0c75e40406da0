-- An attempt's row is written once, when the attempt ends (issue 13): the running
-- attempt is read from its job's row (`postgres.queries`), and only an attempt that
-- leaves the job row behind (offloaded to a provider batch, or left in its lane by a
-- lane move) is stored before its end and ended in place. The room 019 kept on each
-- page for the end's HOT update would now stay empty: `attempts` is packed again.
-- The SQLite migration of the same number has nothing to do.
ALTER TABLE attempts SET (fillfactor = 100);
