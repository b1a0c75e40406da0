-- Room on each page for a row's next versions (issue 13): the SQLite migration of the
-- same number (migrations/sqlite/019_row_room.sql) has nothing to do.
--
-- A job row is rewritten at its claim and at its finish, and never in place: `state`
-- is in partial indexes' predicates, so no update is HOT. When the new version does not
-- fit on the old one's page, PostgreSQL first marks the old one locked in a WAL record
-- of its own, then logs the whole new version on another page; on the same page it logs
-- one record, compressed against the old version. Packed full, every update left its
-- page: 3.8 lock records a job where the claim's and the finish's row locks are 2.
-- Half full, 2.1-2.2 (the claim's old version is pruned by the time the finish runs),
-- ~150 B less WAL a job (bench.postgres_processing, 10,000 no-op jobs; 40% full: 2.0,
-- 70%: 3.0). The price: finished jobs kept until retention take twice the pages, which
-- a full count (the dashboard's grouped counts) reads. It holds for rows inserted from
-- now on; no table is rewritten, and `ALTER TABLE jobs SET (fillfactor = 100)` undoes it.
ALTER TABLE jobs SET (fillfactor = 50);

-- An attempt row is written at the claim and ended at the finish. Its key columns do not
-- change, so the end is a HOT update when the page has room for the new version: at 70%
-- full, 41% of them were (the rest inserted a key entry and locked the old version, as
-- above); at 45% all of them, ~160 B less a job. Attempts are read by job, never whole.
ALTER TABLE attempts SET (fillfactor = 45);
