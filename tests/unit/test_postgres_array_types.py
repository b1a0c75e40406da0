"""The PostgreSQL store looks up, as each connection opens, every array type its SQL
sends: one it did not would be looked up on the first statement that uses it."""

from __future__ import annotations

import re

from source_tree import PACKAGE

from backroom.store.postgres.array_types import ARRAY_TYPES, learn_array_types

_CAST = re.compile(r"::\s*([a-z][a-z0-9_ ]*?)\s*\[\]", re.IGNORECASE)


def test_every_array_cast_in_the_postgres_store_is_among_the_types_looked_up_up_front() -> None:
    cast = {
        f"{match.group(1).lower()}[]"
        for path in (PACKAGE / "store" / "postgres").glob("*.py")
        for match in _CAST.finditer(path.read_text())
    }
    assert cast, "the pattern found no cast at all"
    assert cast <= set(ARRAY_TYPES)


class _ReshapedAsyncpg:
    """A connection whose private lookup hooks take other arguments than ours."""

    def __init__(self) -> None:
        self._protocol = object()
        self.probed: list[str] = []

    async def _introspect_types(self) -> None:
        raise AssertionError("not reached: the call's arguments do not fit")

    async def fetchrow(self, statement: str, *args: object) -> None:
        self.probed.append(statement)


async def test_an_asyncpg_with_reshaped_lookup_hooks_still_gets_the_types_looked_up() -> None:
    connection = _ReshapedAsyncpg()
    await learn_array_types(connection)  # type: ignore[arg-type]
    assert len(connection.probed) == 1
    assert all(f"::{name}" in connection.probed[0] for name in ARRAY_TYPES)
