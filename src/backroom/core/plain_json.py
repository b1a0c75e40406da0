"""JSON that every store keeps and every client reads back: `check_plain_json`.

Python's `json` module reads and writes more than JSON: NaN and Infinity, and strings
(keys included) holding a lone UTF-16 surrogate such as "\\ud800", which no UTF-8 text
can carry. Such a value must be refused where it enters, before anything is stored.
"""

from __future__ import annotations

import json
from itertools import repeat

from backroom.core.errors import InvalidJson
from backroom.core.job import JSON

# One encoder for every check: `json.dumps` with options builds a new one per call.
_STRICT = json.JSONEncoder(allow_nan=False, ensure_ascii=False)

# Values plain by their type alone.
_ALWAYS_PLAIN = (type(None), bool, int)

# Deeper than this, the walk leaves the value to the encoder (which refuses too deep).
_WALK_DEPTH = 32


def _plain_by_types(value: JSON, depth: int) -> bool:
    """True when `value` is plain JSON for certain without encoding it: nothing but
    None, booleans, integers, ASCII strings, lists and objects with ASCII keys.

    Most inputs are; this walk costs a fraction of encoding them. False means "not
    certain" (a float, a non-ASCII string): the encoder then decides.
    """
    kind = type(value)
    if kind in _ALWAYS_PLAIN:
        return True
    if kind is str:
        return bool(value.isascii())
    if depth == _WALK_DEPTH:
        return False
    # No generator expressions: the walk runs for every submitted input, mostly small
    # objects, where a generator's set-up costs more than the walk.
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or not key.isascii() or not _plain_by_types(item, depth + 1):
                return False
        return True
    if kind is list:
        return all(map(_plain_by_types, value, repeat(depth + 1)))
    return False


def check_plain_json(value: JSON, what: str) -> None:
    """Raise `InvalidJson` (naming `what`) unless `value`, its keys included, is plain
    JSON: finite numbers, and strings that encode as UTF-8."""
    if _plain_by_types(value, 0):
        return
    try:
        _STRICT.encode(value).encode()
    except UnicodeEncodeError:
        raise InvalidJson(
            what, "a string or key holds a lone surrogate (\\ud800-\\udfff)"
        ) from None
    except (TypeError, ValueError, RecursionError) as error:
        raise InvalidJson(what, str(error)) from None
