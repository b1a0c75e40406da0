-- When a worker finds nothing to claim it asks for the next time anything in its queues
-- needs it (`next_wakeup`): the earliest due job of each of its tasks in each lane that
-- is open to it. In task and lane order within a queue, that is one seek per (queue,
-- task, lane) rather than a read of every queued job (100,000 queued: 25-40 ms).
CREATE INDEX jobs_wakeup ON jobs (queue, task, lane, run_at) WHERE state = 'queued';
