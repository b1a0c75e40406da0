"""How many free slots a busy worker waits for before it claims: `SlotGathering`."""

from __future__ import annotations

from backroom.runtime.worker_config import WorkerConfig


class SlotGathering:
    """Lets freed slots of a busy worker gather into one claim.

    Async handlers end one by one; a claim for each freed slot would pay a statement
    and a commit per job. While jobs run, the worker waits until `claim_floor` slots
    are free, for at most a poll interval (so a slot never idles longer while work is
    queued). An idle worker claims at once.
    """

    def __init__(self, config: WorkerConfig) -> None:
        self._config = config
        self._since: int | None = None

    def until(self, now: int, free: int, *, running: int) -> int | None:
        """Until when to wait before claiming (None: claim now), with `free` slots free
        and `running` jobs running."""
        config = self._config
        if not running or free >= config.claim_floor:
            self._since = None
            return None
        if self._since is None:
            self._since = now
        until = self._since + config.poll_interval_ms
        if now >= until:
            self._since = None
            return None
        return until if config.stop_at is None else min(until, config.stop_at)
