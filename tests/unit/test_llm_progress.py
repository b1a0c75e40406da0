"""Streamed text is passed on about every 250 ms of clock time, not per delta."""

from __future__ import annotations

from backroom.llm.progress import StreamProgress


class SteppingClock:
    """Each reading is `step` ms after the previous one."""

    def __init__(self, step: int) -> None:
        self.step = step
        self.time = 0

    def now(self) -> int:
        self.time += self.step
        return self.time

    async def sleep(self, ms: float) -> None:
        self.time += int(ms)


async def test_text_so_far_is_reported_once_per_interval() -> None:
    reports: list[str] = []

    async def report(text: str) -> None:
        reports.append(text)

    progress = StreamProgress(SteppingClock(step=100), report)
    for word in ["a ", "b ", "c ", "d ", "e ", "f ", "g "]:
        await progress.add(word)
    # Readings at 100 (start), then 200, 300, 400 (report), 500, 600, 700 (report), 800.
    assert reports == ["a b c ", "a b c d e f "]
    assert progress.text == "a b c d e f g "


async def test_without_a_callback_text_is_only_collected() -> None:
    progress = StreamProgress(SteppingClock(step=1000), None)
    await progress.add("x")
    await progress.add("y")
    assert progress.text == "xy"
