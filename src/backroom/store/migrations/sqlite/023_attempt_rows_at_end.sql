-- Nothing to do on SQLite: PostgreSQL's 023 writes an attempt's row when it ends and
-- packs `attempts` again; SQLite still writes the row at the claim and ends it in
-- place. The numbers stay in step across dialects.
SELECT 1;
