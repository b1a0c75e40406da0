-- Nothing to do on SQLite: PostgreSQL's migration of the same number merges partial
-- indexes; the SQLite schema keeps its own.
SELECT 1;
