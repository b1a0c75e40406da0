"""GroupWriter: concurrent items written a group at a time, each caller answered alone."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence

import pytest

from backroom.store.group_writes import GroupWriter


class Recorder:
    """A write that records its groups, doubles numbers and refuses negative ones."""

    def __init__(self) -> None:
        self.groups: list[list[int]] = []
        self.release = asyncio.Event()
        self.release.set()

    async def write_many(self, items: list[int]) -> Sequence[int | Exception]:
        self.groups.append(items)
        await self.release.wait()
        if 0 in items:
            raise RuntimeError("the store is down")
        return [ValueError(f"{n} is negative") if n < 0 else 2 * n for n in items]


async def test_items_handed_in_together_are_written_as_one_group() -> None:
    recorder = Recorder()
    writer = GroupWriter(recorder.write_many)

    answers = await asyncio.gather(*(writer.add(n) for n in (1, 2, 3)))

    assert answers == [2, 4, 6]
    assert recorder.groups == [[1, 2, 3]]
    assert writer.groups == 1


async def test_an_items_own_error_reaches_only_its_caller() -> None:
    writer = GroupWriter(Recorder().write_many)

    answers = await asyncio.gather(*(writer.add(n) for n in (1, -1)), return_exceptions=True)

    assert answers[0] == 2
    assert isinstance(answers[1], ValueError)


async def test_a_failed_write_answers_every_item_of_its_group_with_its_error() -> None:
    writer = GroupWriter(Recorder().write_many)

    answers = await asyncio.gather(*(writer.add(n) for n in (1, 0)), return_exceptions=True)

    assert [str(answer) for answer in answers] == ["the store is down"] * 2
    assert await writer.add(5) == 10


async def test_items_arriving_during_a_write_go_in_the_next_group() -> None:
    recorder = Recorder()
    recorder.release.clear()
    writer = GroupWriter(recorder.write_many)
    first = writer.add(1)
    while not recorder.groups:
        await asyncio.sleep(0)

    later = [writer.add(n) for n in (2, 3)]
    recorder.release.set()

    assert await asyncio.gather(first, *later) == [2, 4, 6]
    assert recorder.groups == [[1], [2, 3]]


async def test_a_caller_that_stops_waiting_does_not_cut_the_write_short() -> None:
    recorder = Recorder()
    recorder.release.clear()
    writer = GroupWriter(recorder.write_many)
    leaving = asyncio.ensure_future(writer.add(1))
    staying = writer.add(2)
    while not recorder.groups:
        await asyncio.sleep(0)

    leaving.cancel()
    recorder.release.set()

    assert await staying == 4
    with pytest.raises(asyncio.CancelledError):
        await leaving
    assert recorder.groups == [[1, 2]]


async def test_a_group_is_closed_once_its_turn_has_come() -> None:
    recorder = Recorder()
    turn_free = asyncio.Event()
    turns: list[str] = []

    @contextlib.asynccontextmanager
    async def turn() -> AsyncIterator[None]:
        await turn_free.wait()  # another process is writing
        turns.append("taken")
        yield
        turns.append("given back")

    writer = GroupWriter(recorder.write_many, turn=turn)
    first = writer.add(1)
    await asyncio.sleep(0)  # the writer starts and waits for the turn
    later = writer.add(2)  # arrives while it waits: joins the same group
    turn_free.set()

    assert list(await asyncio.gather(first, later)) == [2, 4]
    assert recorder.groups == [[1, 2]]
    assert turns == ["taken", "given back"]
