-- The W3C `traceparent` a submission came with (NULL: none): each attempt's span
-- continues that trace (see backroom.telemetry.tracing).
ALTER TABLE jobs ADD COLUMN traceparent TEXT;
