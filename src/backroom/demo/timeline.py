"""The seeds' example, run by the real worker and the real store under a SimClock.

Keys k1, k2, k1, k3 submit payloads report, flaky, report, broken. One worker claims
on a 500 ms tick; `flaky` times out on its first attempt only, `broken` always; a
failed attempt is retried at now + 1000 ms x attempts; the clock stops at 8000.
"""

from __future__ import annotations

from collections.abc import Callable

from backroom.app import App
from backroom.clock import SimClock
from backroom.context import JobContext
from backroom.core.job import Job
from backroom.core.outcome import Failed, Outcome, RetryAt
from backroom.core.retry import Jitter, RetryPolicy, Schedule
from backroom.runtime.worker_config import WorkerConfig
from backroom.store.sqlite.store import SqliteStore

SUBMISSIONS = (("k1", "report"), ("k2", "flaky"), ("k1", "report"), ("k3", "broken"))
TICK_MS = 500
STOP_AT_MS = 8000


async def summarize(ctx: JobContext, payload: str) -> str:
    """The fake model call: `broken` always times out, `flaky` on its first attempt."""
    if payload == "broken" or (payload == "flaky" and ctx.attempt == 1):
        raise TimeoutError
    return f"summary of {payload}"


def describe(job: Job, outcome: Outcome, now: int) -> str:
    """One timeline line: what attempt `job.attempt` of `job` did at `now`."""
    head = f"t={now} job-{job.id} attempt {job.attempt}"
    if isinstance(outcome, RetryAt):
        return f"{head}: {outcome.error.message}, retry at t={outcome.at}"
    if isinstance(outcome, Failed):
        return f"{head}: failed for good"
    return f"{head}: {type(outcome).__name__.lower()}"


def run_demo(max_attempts: int = 3, per_tick: int = 1, emit: Callable[[str], None] = print) -> None:
    """Print the seeds' timeline; `max_attempts` and `per_tick` are the seeds' exercises."""
    clock = SimClock(start=0)
    retry = RetryPolicy(
        max_attempts=max_attempts,
        schedule=Schedule.LINEAR,
        base_ms=1000,
        cap_ms=3_600_000,
        jitter=Jitter.NONE,
    )
    app = App(store=SqliteStore.from_url("sqlite://:memory:"), clock=clock, retry=retry)
    app.task("summarize")(summarize)

    async def main() -> None:
        async with app:
            job_ids: list[int] = []
            for key, payload in SUBMISSIONS:
                submitted = await app.submit("summarize", payload, key=key)
                verdict = "new" if submitted.created else "duplicate, same job"
                emit(f"submit {key}: job-{submitted.job.id} ({verdict})")
                if submitted.created:
                    job_ids.append(submitted.job.id)
            config = WorkerConfig(
                concurrency=per_tick,
                poll_interval_ms=TICK_MS,
                drain=False,
                burst=True,
                stop_at=STOP_AT_MS,
                worker_id="demo",
            )
            worker = app.worker(config)
            worker.on_attempt_end(lambda job, outcome, now: emit(describe(job, outcome, now)))
            await worker.run()
            for job_id in job_ids:
                job = await app.get(job_id)
                result = "-" if job.result is None else job.result
                emit(f"job-{job.id} {job.state} attempts={job.attempt} result={result}")

    clock.run(main())
