"""The demo tasks `backroom serve` runs by default, and what its first start prints."""

from __future__ import annotations

from backroom import JobState, SimClock, run_until_idle
from backroom.api.server import first_start_key, print_welcome
from backroom.demo.tasks import DemoPace, demo_app

START = 1_700_000_000_000
TEXT = " ".join(f"word{n}" for n in range(40))


def test_summarize_reports_progress_retries_once_in_a_while_and_summarizes() -> None:
    clock = SimClock(START)
    app = demo_app("sqlite://:memory:", clock=clock, pace=DemoPace(steps=4, step_ms=250))
    progress: list[tuple[float, str]] = []

    async def scenario() -> list[tuple[JobState, int, object]]:
        async with app:
            # The first attempt of job 1 is an unlucky one (decided by its id), job 2's not.
            ids = [(await app.submit("demo.summarize", {"text": TEXT})).job.id for _ in range(2)]
            ids.append((await app.submit("demo.summarize", 42)).job.id)
            ids.append((await app.submit("demo.noop", None)).job.id)
            await run_until_idle(app)
            jobs = [await app.get(job_id) for job_id in ids]
            progress.extend((job.progress or 0.0, str(job.partial)) for job in jobs[:2])
            return [(job.state, job.attempt, job.result) for job in jobs]

    outcomes = clock.run(scenario())

    summary = {"summary": " ".join(TEXT.split()[:30]) + " ...", "words": 40}
    assert outcomes == [
        (JobState.SUCCEEDED, 2, summary),
        (JobState.SUCCEEDED, 1, summary),
        (JobState.FAILED, 1, None),
        (JobState.SUCCEEDED, 1, None),
    ]
    assert progress == [(1.0, " ".join(TEXT.split()[:30]))] * 2


def test_the_first_start_creates_one_default_key_and_prints_how_to_use_it() -> None:
    clock = SimClock(START)
    app = demo_app("sqlite://:memory:", clock=clock)
    lines: list[str] = []

    async def scenario() -> tuple[str | None, str | None]:
        async with app:
            return await first_start_key(app), await first_start_key(app)

    first, second = clock.run(scenario())
    assert first is not None
    assert first.startswith("br_")
    assert second is None

    print_welcome(app, "http://127.0.0.1:8000", first, lines.append)
    text = "\n".join(lines)
    assert "http://127.0.0.1:8000/docs" in text
    assert f"export BACKROOM_API_KEY={first}" in text
    assert "curl -s http://127.0.0.1:8000/v1/jobs " in text
    assert '"task": "demo.summarize"' in text
    assert "curl -s http://127.0.0.1:8000/v1/jobs/1 " in text
