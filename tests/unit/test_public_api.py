"""The package's public names: sorted, importable, documented."""

from __future__ import annotations

import inspect

import backroom


def test_all_is_sorted_and_unique() -> None:
    assert list(backroom.__all__) == sorted(set(backroom.__all__))


def test_every_public_name_exists_and_has_a_docstring() -> None:
    for name in backroom.__all__:
        value = getattr(backroom, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert inspect.getdoc(value), f"{name} has no docstring"
