-- Nothing to do on SQLite: PostgreSQL's 019 leaves room on its pages for the next
-- versions of job and attempt rows (fillfactor); SQLite rewrites a row in place. The
-- numbers stay in step across dialects.
SELECT 1;
