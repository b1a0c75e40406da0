-- Room on each page for a row's next versions (issue 13): the SQLite migration of the
-- same number (migrations/sqlite/019_row_room.sql) has nothing to do.
--
-- `jobs` stays packed. Its rows are rewritten at the claim and at the finish, never in
-- place (`state` is in partial indexes' predicates, so no update is HOT), and a new
-- version that leaves its page costs a lock record and the whole row in the WAL: at
-- fillfactor 50, 2.1 lock records a job instead of 3.8 and ~150 B less WAL a job, with
-- no measurable change in jobs/s (bench.postgres_processing, 10,000 no-op jobs). The
-- price was twice the pages for every finished job kept until retention, read by each
-- full count (the dashboard's and /metrics' grouped counts 10-40% slower): not paid.
-- docs/operations.md says how an operator trades the other way.

-- An attempt row is written at the claim and ended at the finish. Its key columns do not
-- change, so the end is a HOT update when the page has room for the new version: at 70%
-- full, 41% of them were (the rest inserted a key entry and locked the old version, as
-- above); at 45% all of them, ~160 B less a job. Attempts are read by job, never whole.
ALTER TABLE attempts SET (fillfactor = 45);
