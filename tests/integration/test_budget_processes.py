"""Budgets are hard caps: thirty jobs racing in two worker processes never overshoot.

Two `backroom worker` processes (fifteen jobs at a time each) share one database
(SQLite or PostgreSQL) and a tenant with a $0.005 daily budget, which holds about
seven of the thirty calls asked for. The mock answers after 200 ms, so calls overlap
and each worker's budget checks race the other's. Before calls were reserved, this
spent 1.92 times the budget; now the spend stays within it, and the jobs the budget
cannot hold fail with `BudgetExhausted` (the workers run with `--over-budget fail`)
without a call.
"""

from __future__ import annotations

import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from deadline_polls import until

from backroom import App
from backroom.clock import SystemClock
from backroom.core.job import JobState
from backroom.core.usage import DailyBudget, day_start, next_day_start, usd
from backroom.llm.mock.server import MockConfig
from backroom.llm.mock.thread import running_mock
from backroom.llm.task import RESPOND_TASK
from backroom.runtime.lane_gate import BUDGET_EXHAUSTED
from backroom.service.api_keys import issue_key
from backroom.store.protocol import JobFilter

HERE = Path(__file__).resolve().parent
BUDGET_USD = Decimal("0.005")
JOBS = 30
DEADLINE_MS = 90_000
POLL_MS = 50
CLOCK = SystemClock()
# gpt-4o's prices; a 200-character prompt costs about $0.0007 a call.
CONFIG = """
[providers.mock]
base_url = "{base_url}"
builtin_prices = false

[providers.mock.models."priced"]
input_usd_per_million = 2.50
output_usd_per_million = 10.00
"""


def start_worker(db: str, config: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(HERE), "BACKROOM_CONFIG": str(config)}
    # The mock answers in 200 ms: a call times out only when a loaded machine starves
    # the processes, and is then charged at its reservation and its job tried again,
    # which is right but not the one-call-per-job accounting asserted here. So calls get
    # 25 s (under the 30 s lease) rather than the worker app's 10 s.
    env["BACKROOM_TEST_CALL_TIMEOUT_S"] = "25"
    command = [sys.executable, "-m", "backroom", "worker", "--app", "llm_worker_app:app"]
    options = ["--concurrency", "15", "--over-budget", "fail", "--poll-interval", "0.05"]
    return subprocess.Popen([*command, "--db", db, *options], env=env)


async def submit_all(db: str) -> None:
    async with App(db) as app:
        await issue_key(app, "thrifty", daily_budget=DailyBudget.of_usd(BUDGET_USD))
        for number in range(JOBS):
            prompt = f"Budget job {number:02d}: " + "tell me about lanes " * 9
            payload = {"model": "priced", "input": prompt, "max_output_tokens": 64}
            await app.submit(RESPOND_TASK, payload, tenant="thrifty")


async def wait_until_finished(db: str) -> None:
    async with App(db) as app:

        async def finished() -> bool:
            jobs = await app.list_jobs(JobFilter(limit=JOBS))
            return all(job.state.terminal for job in jobs)

        await until(finished, "every job to finish", DEADLINE_MS / 1000)


@pytest.mark.slow
async def test_concurrent_jobs_in_two_processes_never_overshoot_the_budget(
    database_url: str, tmp_path: Path
) -> None:
    db = database_url
    config = tmp_path / "llm.toml"
    with running_mock(MockConfig(latency_ms=200)) as base_url:
        config.write_text(CONFIG.format(base_url=base_url))
        await submit_all(db)
        workers = [start_worker(db, config) for _ in range(2)]
        try:
            await wait_until_finished(db)
        finally:
            for worker in workers:
                worker.terminate()
            for worker in workers:
                worker.wait(30)

    async with App(db) as app:
        now = app.clock.now()
        spent = await app.store.spent_pico_usd("thrifty", day_start(now), next_day_start(now))
        jobs = await app.list_jobs(JobFilter(limit=JOBS))
        usage = [await app.store.usage_totals(job.id) for job in jobs]
    budget = DailyBudget.of_usd(BUDGET_USD).limit_pico_usd
    succeeded = [job for job in jobs if job.state is JobState.SUCCEEDED]
    refused = [job for job in jobs if job.state is JobState.FAILED]
    print(f"spent ${usd(spent):f} of ${BUDGET_USD}: {spent / budget:.3f}x, {len(succeeded)} calls")
    assert spent <= budget
    # The budget was the limit: most of it spent, the rest of the jobs refused.
    assert spent > budget // 2
    assert len(succeeded) + len(refused) == JOBS
    assert refused and all(job.error and job.error.kind == BUDGET_EXHAUSTED for job in refused)
    # Only the jobs that succeeded made a call (one each); every call was paid for.
    assert [totals.calls for totals in usage] == [
        1 if job.state is JobState.SUCCEEDED else 0 for job in jobs
    ]
