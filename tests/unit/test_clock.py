"""`SimClock`: virtual time that moves only when nothing else can.

The virtual waits here are hours long on purpose: on a clock that really slept they
would hang, and the per-test timeout would fail the test. Nothing asserts on real time.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable

import pytest

from backroom.clock import SimClock

START = 1_700_000_000_000
HOUR = 3_600_000

# How long (real seconds) the executor job below stays busy. While it runs the event
# loop goes idle several times over; a clock that let virtual time move then would wake
# the one-hour sleeper during it. Short enough that the test costs next to nothing.
BUSY_THREAD_S = 0.2


def test_now_before_any_run_is_the_start() -> None:
    assert SimClock(start=START).now() == START


def test_concurrent_sleepers_wake_in_time_order_at_exact_times() -> None:
    clock = SimClock(start=START)
    woke: list[tuple[str, int]] = []

    async def sleeper(name: str, ms: int) -> None:
        await clock.sleep(ms)
        woke.append((name, clock.now()))

    async def main() -> None:
        await asyncio.gather(
            sleeper("third", 3 * HOUR),
            sleeper("first", HOUR),
            sleeper("fourth", 24 * HOUR),
            sleeper("second", 2 * HOUR + 1),
        )

    clock.run(main())
    assert woke == [
        ("first", START + HOUR),
        ("second", START + 2 * HOUR + 1),
        ("third", START + 3 * HOUR),
        ("fourth", START + 24 * HOUR),
    ]


def test_sleeps_add_up_exactly() -> None:
    clock = SimClock(start=START)

    async def main() -> list[int]:
        seen = []
        for ms in (1, 500, HOUR, 0, 250):
            await clock.sleep(ms)
            seen.append(clock.now())
        return seen

    assert clock.run(main()) == [
        START + 1,
        START + 501,
        START + 501 + HOUR,
        START + 501 + HOUR,
        START + 751 + HOUR,
    ]


def test_a_negative_sleep_returns_at_once() -> None:
    clock = SimClock(start=START)

    async def main() -> int:
        await clock.sleep(-HOUR)
        return clock.now()

    assert clock.run(main()) == START


def blocking_work(sleeper_woke: threading.Event) -> bool:
    """Stand-in for slow work in a thread; True if the sleeper woke meanwhile."""
    return sleeper_woke.wait(BUSY_THREAD_S)


def in_executor(work: Callable[[], bool]) -> Awaitable[bool]:
    """Run `work` through `loop.run_in_executor`."""
    return asyncio.get_running_loop().run_in_executor(None, work)


def in_to_thread(work: Callable[[], bool]) -> Awaitable[bool]:
    """Run `work` through `asyncio.to_thread`."""
    return asyncio.to_thread(work)


@pytest.mark.parametrize("offload", [in_executor, in_to_thread])
def test_executor_work_holds_virtual_time_still(
    offload: Callable[[Callable[[], bool]], Awaitable[bool]],
) -> None:
    clock = SimClock(start=START)
    sleeper_woke = threading.Event()

    async def sleeper() -> int:
        await clock.sleep(HOUR)
        sleeper_woke.set()
        return clock.now()

    async def main() -> tuple[bool, int, int]:
        sleeping = asyncio.create_task(sleeper())
        woke_during_work = await offload(lambda: blocking_work(sleeper_woke))
        after_work = clock.now()
        return woke_during_work, after_work, await sleeping

    woke_during_work, after_work, sleeper_woke_at = clock.run(main())
    assert not woke_during_work
    assert after_work == START
    assert sleeper_woke_at == START + HOUR


def test_executor_work_sees_the_time_it_started_at() -> None:
    clock = SimClock(start=START)

    async def main() -> tuple[int, int]:
        await clock.sleep(HOUR)
        in_thread = await asyncio.to_thread(clock.now)
        return in_thread, clock.now()

    assert clock.run(main()) == (START + HOUR, START + HOUR)


def test_asyncio_timeout_fires_at_the_virtual_deadline() -> None:
    clock = SimClock(start=START)

    async def main() -> int:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(HOUR / 1000):
                await clock.sleep(24 * HOUR)
        return clock.now()

    assert clock.run(main()) == START + HOUR


def test_wait_for_fires_at_the_virtual_deadline() -> None:
    clock = SimClock(start=START)

    async def main() -> int:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(clock.sleep(24 * HOUR), timeout=2 * HOUR / 1000)
        return clock.now()

    assert clock.run(main()) == START + 2 * HOUR


def test_a_timeout_that_is_not_reached_does_not_fire() -> None:
    clock = SimClock(start=START)

    async def main() -> int:
        async with asyncio.timeout(2 * HOUR / 1000):
            await clock.sleep(HOUR)
        return clock.now()

    assert clock.run(main()) == START + HOUR


def test_time_carries_over_between_runs() -> None:
    clock = SimClock(start=START)

    async def nap() -> int:
        await clock.sleep(HOUR)
        return clock.now()

    assert clock.run(nap()) == START + HOUR
    assert clock.now() == START + HOUR
    assert clock.run(nap()) == START + 2 * HOUR
    assert clock.now() == START + 2 * HOUR


def test_run_returns_the_result_and_raises_the_error_of_main() -> None:
    clock = SimClock(start=START)

    async def fail() -> None:
        await clock.sleep(HOUR)
        raise LookupError("from main")

    with pytest.raises(LookupError, match="from main"):
        clock.run(fail())
    assert clock.now() == START + HOUR


async def test_sleep_on_another_event_loop_raises() -> None:
    with pytest.raises(RuntimeError, match=r"inside SimClock\.run"):
        await SimClock(start=START).sleep(HOUR)


def test_sleep_with_no_event_loop_raises() -> None:
    sleeping = SimClock(start=START).sleep(HOUR)
    with pytest.raises(RuntimeError):
        sleeping.send(None)
    sleeping.close()
