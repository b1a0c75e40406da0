"""The `Idempotency-Key` request header.

The value is 1-255 printable ASCII characters, sent bare (`abc`) or as the quoted
string of RFC 8941 structured fields (`"abc"`, with `\\"` and `\\\\` escapes), which
the IETF idempotency-key draft defines the header to be.
"""

from __future__ import annotations

MAX_KEY_LENGTH = 255
MAX_QUOTED_KEY_LENGTH = 2 + 2 * MAX_KEY_LENGTH
"""The longest header value: a quoted key whose every character is escaped."""
KEY_HEADER_PATTERN = r"^[ -~]+$"
"""Printable ASCII, the only characters a header value may carry a key in."""


class InvalidIdempotencyKey(ValueError):
    """The header's value is not a usable idempotency key."""


def _unquote(quoted: str) -> str:
    """The content of an RFC 8941 sf-string (`quoted` starts and ends with a quote)."""
    if len(quoted) < 2 or not quoted.endswith('"'):
        raise InvalidIdempotencyKey("a quoted key must end with a double quote")
    characters: list[str] = []
    escaped = False
    for character in quoted[1:-1]:
        if escaped:
            if character not in '"\\':
                raise InvalidIdempotencyKey('only \\" and \\\\ may be escaped in a quoted key')
            characters.append(character)
            escaped = False
        elif character == "\\":
            escaped = True
        elif character == '"':
            raise InvalidIdempotencyKey("a quote inside a quoted key must be escaped")
        else:
            characters.append(character)
    if escaped:
        raise InvalidIdempotencyKey("a quoted key cannot end with a backslash")
    return "".join(characters)


def parse_idempotency_key(raw: str) -> str:
    """The key an `Idempotency-Key` header value carries; `InvalidIdempotencyKey` if none."""
    key = _unquote(raw) if raw.startswith('"') else raw
    if not 1 <= len(key) <= MAX_KEY_LENGTH:
        raise InvalidIdempotencyKey(f"the key must be 1-{MAX_KEY_LENGTH} characters long")
    if not all(" " <= character <= "~" for character in key):
        raise InvalidIdempotencyKey("the key must be printable ASCII")
    return key
