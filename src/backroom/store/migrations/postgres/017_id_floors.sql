-- Nothing to do on PostgreSQL: its sequences never hand out an id twice, even after
-- retention deletes the newest rows. (SQLite's 017 keeps its ids from coming back; the
-- numbers stay in step across dialects.)
SELECT 1;
