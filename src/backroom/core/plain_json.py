"""JSON that every store keeps and every client reads back: `check_plain_json`.

Python's `json` module reads and writes more than JSON: NaN and Infinity, and strings
(keys included) holding a lone UTF-16 surrogate such as "\\ud800", which no UTF-8 text
can carry. Such a value must be refused where it enters, before anything is stored.
"""

from __future__ import annotations

import json

from backroom.core.errors import InvalidJson
from backroom.core.job import JSON

# One encoder for every check: `json.dumps` with options builds a new one per call.
_STRICT = json.JSONEncoder(allow_nan=False, ensure_ascii=False)

# Values plain by their type alone: what most inputs of a bulk submission are.
_ALWAYS_PLAIN = (type(None), bool, int)


def check_plain_json(value: JSON, what: str) -> None:
    """Raise `InvalidJson` (naming `what`) unless `value`, its keys included, is plain
    JSON: finite numbers, and strings that encode as UTF-8."""
    if type(value) in _ALWAYS_PLAIN or (type(value) is str and value.isascii()):
        return
    if type(value) is dict and not value:
        return
    try:
        _STRICT.encode(value).encode()
    except UnicodeEncodeError:
        raise InvalidJson(
            what, "a string or key holds a lone surrogate (\\ud800-\\udfff)"
        ) from None
    except (TypeError, ValueError, RecursionError) as error:
        raise InvalidJson(what, str(error)) from None
