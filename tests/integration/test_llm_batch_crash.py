"""A `backroom worker` SIGKILLed after its batch was created and before it stored the
batch's id: the next worker finds the batch instead of creating a second one, and
every job finishes once from its line. OpenAI's batch is found by the name in its
metadata; Anthropic's, which carry none, by the intent's time and request count
while it is still in progress (`llm.providers.anthropic.batch_find`).

The mock answers the create three seconds after making the batch, so the test kills
the worker while it waits for that answer, once the mock lists the batch.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from batch_offload_support import KINDS, all_finished, batch_job, mock_batches
from deadline_polls import until

from backroom import App
from backroom.core.job import JobState
from backroom.llm.mock.batch_jobs import BatchMockConfig
from backroom.llm.mock.server import MockConfig
from backroom.llm.mock.thread import running_mock
from backroom.llm.settings import ProviderKind

HERE = Path(__file__).resolve().parent
JOBS = 40
CONFIG = """
[providers.mock]
base_url = "{base_url}"
kind = "{kind}"

[providers.mock.models."priced"]
input_usd_per_million = 0.15
output_usd_per_million = 0.60

[batch]
default = "batch-queue"
flush_after_s = 0.5
poll_first_s = 0.2
poll_max_s = 0.5
hold_s = 2
"""


def start_worker(db: str, config: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(HERE), "BACKROOM_CONFIG": str(config)}
    command = [sys.executable, "-m", "backroom", "worker", "--app", "llm_worker_app:app"]
    return subprocess.Popen([*command, "--db", db, "--concurrency", "64"], env=env)


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
async def test_a_worker_killed_before_storing_its_batch_id_sends_one_batch(
    database_url: str, tmp_path: Path, kind: ProviderKind
) -> None:
    config = tmp_path / "llm.toml"
    # Anthropic's batch is still in progress when the next worker recovers its intent.
    delay_ms = 8_000 if kind == "anthropic" else 500
    batches = BatchMockConfig(delay_ms=delay_ms, create_delay_ms=3_000)
    with running_mock(MockConfig(batches=batches)) as base_url:
        config.write_text(CONFIG.format(base_url=base_url, kind=kind))
        async with App(database_url) as app:
            await app.submit_many([batch_job(app, f"crash job {n}") for n in range(JOBS)])
        first = start_worker(database_url, config)
        try:

            async def created() -> bool:
                return len(await mock_batches(base_url, kind)) == 1

            await until(created, "the first worker to create its batch", 60)
            first.send_signal(signal.SIGKILL)
            first.wait(30)
        finally:
            first.kill()
        async with App(database_url) as app:
            (intent,) = await app.store.provider_batches()
            assert intent.provider_batch_id is None  # killed before storing it
            second = start_worker(database_url, config)
            try:
                jobs = await all_finished(app, JOBS, seconds=90)
            finally:
                second.terminate()
                await asyncio.to_thread(second.wait, 30)
        (batch,) = await mock_batches(base_url, kind)
    assert batch.total == JOBS
    assert all(job.state is JobState.SUCCEEDED and job.attempt == 1 for job in jobs)
