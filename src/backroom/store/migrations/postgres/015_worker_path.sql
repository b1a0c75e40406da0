-- The worker's path, lighter (issue 13): the SQLite migration of the same number
-- (migrations/sqlite/015_worker_path.sql) drops the same index.

-- `jobs_finished` (state, finished_at) held nothing `jobs_finished_at` (finished_at,
-- queue, state, tenant) does not: retention's `finished_at < cutoff` reads that one.
-- Every finish wrote an entry in both.
DROP INDEX jobs_finished;

-- NOTIFY serializes commits: a committing transaction that notified holds one lock for
-- the whole server through its WAL flush, so every claim and finish that notified
-- waited for every other one, of any process and database, to reach the disk. A
-- statement may now say (`backroom.feed_hint` = 'after_commit', for its transaction)
-- that its writer sends the feed's hint itself once it has committed, in a transaction
-- that writes nothing (see postgres/feed_hint.py); any other statement notifies here.
CREATE OR REPLACE FUNCTION backroom_feed_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('backroom.feed_hint', true) IS DISTINCT FROM 'after_commit' THEN
        PERFORM pg_notify('backroom_feed', '');
    END IF;
    RETURN NULL;
END
$$;
