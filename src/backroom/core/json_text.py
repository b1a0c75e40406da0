"""JSON text from the standard library's C encoder, without an encoder built per call.

`json.JSONEncoder.encode` builds the C encoder anew on every call, about a microsecond:
as much as encoding a job's small input. `text_encoder` builds it once, with the same
settings, so its text is exactly `json.JSONEncoder(...).encode`'s (where CPython has
no C encoder, it is that method).

>>> canonical = text_encoder(sort_keys=True, ensure_ascii=False, allow_nan=False)
>>> canonical({"b": [1, 2.5], "a": "é"})
'{"a":"é","b":[1,2.5]}'
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json import encoder as _encoder
from typing import Any


def text_encoder(*, sort_keys: bool, ensure_ascii: bool, allow_nan: bool) -> Callable[[Any], str]:
    """A function giving `json.JSONEncoder(separators=(",", ":"), ...).encode(value)`.

    Unlike that encoder it does not detect circular references (a cycle ends in
    `RecursionError`): give it values already known to be plain JSON.
    """
    reference = json.JSONEncoder(
        sort_keys=sort_keys, ensure_ascii=ensure_ascii, allow_nan=allow_nan, separators=(",", ":")
    )
    make = getattr(_encoder, "c_make_encoder", None)
    if make is None:
        return reference.encode
    string = _encoder.encode_basestring_ascii if ensure_ascii else _encoder.encode_basestring
    # The arguments `JSONEncoder.iterencode` gives it: no markers (no cycle check), the
    # default that refuses other types, no indent, no skipped keys.
    chunks = make(None, reference.default, string, None, ":", ",", sort_keys, False, allow_nan)

    def encode(value: Any) -> str:
        if isinstance(value, str):
            text: str = string(value)
            return text
        return "".join(chunks(value, 0))

    return encode
