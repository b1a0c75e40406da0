"""Contract: every backend implements every part of the `Store` protocol."""

from __future__ import annotations

import inspect

from backroom.store.protocol import Store


def test_the_store_has_every_method_of_every_part(store: Store) -> None:
    wanted = {name for name, _ in inspect.getmembers(Store, inspect.isfunction) if name[0] != "_"}
    missing = {name for name in wanted if not callable(getattr(store, name, None))}

    assert wanted
    assert not missing
