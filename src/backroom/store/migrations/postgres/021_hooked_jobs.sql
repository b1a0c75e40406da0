-- The jobs that have a `webhook_url` of their own. The webhook dispatcher asks, for each
-- terminal event when no tenant subscribes, whether its job has one: a probe of this
-- index (empty where no job has one) instead of a read of the job's row (issue 13: the
-- lookup was ~2/3 of the dispatcher's cost on a feed with nothing to deliver).
CREATE INDEX jobs_hooked ON jobs (id) WHERE webhook_url IS NOT NULL;
