-- The submission's W3C `traceparent`: the SQLite migration of the same number.
ALTER TABLE jobs ADD COLUMN traceparent TEXT;
