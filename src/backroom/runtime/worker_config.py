"""How one worker claims and runs jobs: `WorkerConfig`, and the default worker id."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field

from backroom.core.usage import OverBudget
from backroom.runtime.retention import RetentionPolicy

DEFAULT_CONCURRENCY = 200
"""Jobs one worker runs at once unless told (the library's `WorkerConfig` and the CLI's
`backroom worker` and `serve` alike). Handlers are mostly async and wait on the network
(an LLM call, say), so a slot costs a task and little memory; and a worker claims its
free slots in one statement, so for short jobs the slots are the batch: at 200 a
PostgreSQL worker ran no-op jobs ~2x as fast as at 100 and ~6x as fast as at 10, with
the same claim's latency (docs/benchmarks.md). Lower it for blocking (sync) handlers,
which take a thread each, or for handlers heavy on CPU or memory."""


def default_worker_id() -> str:
    """host:pid:random, unique enough to tell workers apart in attempt records (six hex
    digits from os.urandom: the uuid module, with the platform module it imports, was a
    few ms of a worker's start for these)."""
    return f"{socket.gethostname()}:{os.getpid()}:{os.urandom(3).hex()}"


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    """How one worker claims and runs jobs.

    `drain=True` claims again as soon as a slot frees; `drain=False` claims at most once
    per poll interval (the fixed tick of the seeds' example). `burst` exits once no job
    in the worker's queues is queued or running; `stop_at` exits at that clock time.
    `watch_ms` is how often a waiting worker checks for other processes' commits where
    its store cannot be told of them (SQLite; 0: only poll). `retention` says when
    finished jobs are deleted (None: this worker never does).
    `over_budget` says what a queued LLM job (one in a lane) does when its tenant's daily budget is
    spent: wait for the next UTC day, or fail (see `backroom.runtime.lane_gate`).
    `claim_batch` is the fewest free slots worth a claim while jobs run (None: a tenth
    of `concurrency`): async handlers end one by one, and a claim a slot would pay a
    statement and a commit for each job. An idle worker claims as soon as it is woken.
    """

    queues: tuple[str, ...] = ()
    concurrency: int = DEFAULT_CONCURRENCY
    claim_batch: int | None = None
    lease_ms: int = 30_000
    heartbeat_ms: int | None = None
    poll_interval_ms: int = 1_000
    watch_ms: int = 50
    sweep_interval_ms: int = 5_000
    shutdown_grace_ms: int = 10_000
    drain: bool = True
    burst: bool = False
    stop_at: int | None = None
    retention: RetentionPolicy | None = field(default_factory=RetentionPolicy)
    over_budget: OverBudget = OverBudget.WAIT
    worker_id: str = field(default_factory=default_worker_id)

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if self.lease_ms < 10 or self.poll_interval_ms < 1:
            raise ValueError("lease_ms must be >= 10 and poll_interval_ms >= 1")

    @property
    def claim_floor(self) -> int:
        """The fewest free slots a busy worker claims for (`claim_batch`, 1 to concurrency)."""
        wanted = self.concurrency // 10 if self.claim_batch is None else self.claim_batch
        return min(self.concurrency, max(1, wanted))

    @property
    def heartbeat_every_ms(self) -> int:
        """How often leases are extended: a third of the lease unless set."""
        return self.heartbeat_ms if self.heartbeat_ms is not None else self.lease_ms // 3
