"""`text_encoder` writes exactly what `json.JSONEncoder` writes with the same settings."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from backroom.core.json_text import text_encoder

SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
VALUES = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)
SETTINGS = [
    {"sort_keys": True, "ensure_ascii": False, "allow_nan": False},  # fingerprints
    {"sort_keys": False, "ensure_ascii": True, "allow_nan": True},  # stored JSON
]


def _outcome(encode: Any, value: Any) -> str | type[BaseException]:
    try:
        text: str = encode(value)
    except (ValueError, TypeError) as error:
        return type(error)
    return text


@pytest.mark.parametrize("settings", SETTINGS)
@given(value=VALUES)
def test_the_text_is_the_standard_encoders(settings: dict[str, bool], value: Any) -> None:
    reference = json.JSONEncoder(
        separators=(",", ":"),
        sort_keys=settings["sort_keys"],
        ensure_ascii=settings["ensure_ascii"],
        allow_nan=settings["allow_nan"],
    )

    assert _outcome(text_encoder(**settings), value) == _outcome(reference.encode, value)


def test_other_types_are_refused_as_the_standard_encoder_refuses_them() -> None:
    encode = text_encoder(sort_keys=True, ensure_ascii=False, allow_nan=False)

    with pytest.raises(TypeError):
        encode({"when": object()})
    with pytest.raises(ValueError, match="Out of range float"):
        encode([float("nan")])
