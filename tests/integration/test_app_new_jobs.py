"""`App.new_jobs`: many jobs of one task as columns, checked and stored as `new_job`'s
would be; `submit_many` answers with ids, created flags and jobs built when read."""

from __future__ import annotations

from typing import Any

import pytest

from backroom import App
from backroom.clock import SimClock
from backroom.core.errors import ConfigError, IdempotencyConflict, InvalidJson
from backroom.core.job import JSON, JobState
from backroom.core.lanes import LaneLimits, LaneRequest

T0 = 1_700_000_000_000
OPTIONS: dict[str, Any] = {
    "tenant": "acme",
    "queue": "batch",
    "priority": 3,
    "max_attempts": 2,
    "timeout_s": 1.5,
    "delay_s": 2,
    "metadata": {"team": "ünï"},
}


def _lane(input: JSON) -> LaneRequest | None:
    if isinstance(input, dict) and input.get("llm"):
        return LaneRequest("openai/gpt", LaneLimits(), 10)
    return None


def _app(url: str) -> App:
    app = App(url, clock=SimClock(T0))

    @app.task("work", lane_request=_lane)
    async def work(ctx: object, input: JSON) -> None:
        return None

    return app


async def test_columns_store_what_new_job_would(database_url: str) -> None:
    inputs: list[JSON] = [1, {"llm": True, "text": "☕"}, None, "x"]
    async with _app(database_url) as app:
        jobs = app.new_jobs("work", inputs, keys=["a", None, "c", "d"], **OPTIONS)
        submitted = await app.submit_many(jobs)

        for n, value in enumerate(inputs):
            single = app.new_job("work", value, key=jobs[n].idempotency_key, **OPTIONS)
            assert jobs[n] == single
            stored = await app.get(submitted.ids[n])
            assert stored == submitted[n].job
            assert (stored.state, stored.input, stored.run_at) == (
                JobState.QUEUED,
                value,
                T0 + 2000,
            )
        assert submitted[1].job.lane == "openai/gpt"
        assert submitted[0].job.lane is None
        replay = await app.submit("work", 1, key="a", **OPTIONS)
        assert (replay.created, replay.job.id) == (False, submitted.ids[0])
        with pytest.raises(IdempotencyConflict):
            await app.submit("work", 2, key="a", **OPTIONS)


async def test_submitted_jobs_read_as_a_sequence_of_results(database_url: str) -> None:
    async with _app(database_url) as app:
        submitted = await app.submit_many(app.new_jobs("work", range(5)))
        again = await app.submit_many([app.new_job("work", n) for n in range(2)])

        assert len(submitted) == 5
        assert submitted[1:3] == [submitted[1], submitted[2]]
        assert list(submitted) == submitted[:]
        assert [result.job.input for result in submitted] == [0, 1, 2, 3, 4]
        assert list(again.created) == [True, True]
        assert again[0].job.id == submitted.ids[-1] + 1
        assert "created=[True, True]" in repr(again)


async def test_columns_are_checked_as_single_jobs_are(database_url: str) -> None:
    async with _app(database_url) as app:
        with pytest.raises(ConfigError):
            app.new_jobs("nope", [1])
        with pytest.raises(InvalidJson):
            app.new_jobs("work", [1, {"bad": {1, 2}}])
        with pytest.raises(ValueError):
            app.new_jobs("work", [1, 2], keys=["only-one"])
        with pytest.raises(ValueError):
            app.new_jobs("work", [1], delay_s=-1)
        assert len(await app.submit_many(app.new_jobs("work", []))) == 0
