"""Table tests for submission fingerprints in `backroom.core.idempotency`."""

from __future__ import annotations

import pytest

from backroom.core.idempotency import fingerprint
from backroom.core.job import JSON

SAME = [
    ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
    (
        {"outer": {"x": 1, "y": [1, {"p": 1, "q": 2}]}},
        {"outer": {"y": [1, {"q": 2, "p": 1}], "x": 1}},
    ),
    ({"text": "café"}, {"text": "café"}),
]


@pytest.mark.parametrize(("first", "second"), SAME)
def test_key_order_does_not_matter(first: JSON, second: JSON) -> None:
    assert fingerprint("summarise", first) == fingerprint("summarise", second)


def test_option_key_order_does_not_matter() -> None:
    assert fingerprint("t", {}, {"queue": "a", "priority": 1}) == fingerprint(
        "t", {}, {"priority": 1, "queue": "a"}
    )


def test_no_options_and_empty_options_are_the_same() -> None:
    assert fingerprint("t", {"a": 1}) == fingerprint("t", {"a": 1}, {})


DIFFERENT = [
    ({"a": 1}, {"a": 2}),
    ({"a": 1}, {"a": "1"}),
    ({"a": 1}, {"a": 1, "b": None}),
    ([1, 2], [2, 1]),
    ({"a": 1}, [{"a": 1}]),
    ("report", "flaky"),
    (None, {}),
]


@pytest.mark.parametrize(("first", "second"), DIFFERENT)
def test_different_payloads_differ(first: JSON, second: JSON) -> None:
    assert fingerprint("summarise", first) != fingerprint("summarise", second)


def test_different_tasks_differ() -> None:
    assert fingerprint("summarise", {"a": 1}) != fingerprint("translate", {"a": 1})


def test_different_options_differ() -> None:
    assert fingerprint("t", {}, {"priority": 1}) != fingerprint("t", {}, {"priority": 2})


def test_a_fingerprint_is_a_sha256_hex_digest() -> None:
    digest = fingerprint("t", {"a": 1})
    assert len(digest) == 64
    assert set(digest) <= set("0123456789abcdef")


def test_nan_has_no_canonical_form() -> None:
    with pytest.raises(ValueError):
        fingerprint("t", {"x": float("nan")})
