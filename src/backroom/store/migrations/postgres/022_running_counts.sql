-- The claim writes one index entry fewer (issue 13): `jobs_depth` (queue, state, tenant,
-- run_at) held the queued and the running jobs, so every claim moved its job within it.
-- It now holds the queued ones only; the running ones are counted from `jobs_leases`,
-- which a claim writes anyway and which now carries their queue and tenant.
-- The SQLite migration of the same number has nothing to do.
DROP INDEX jobs_depth;
CREATE INDEX jobs_depth ON jobs (queue, tenant, run_at) WHERE state = 'queued';
DROP INDEX jobs_leases;
CREATE INDEX jobs_leases ON jobs (lease_expires_at) INCLUDE (queue, tenant)
    WHERE state = 'running';
