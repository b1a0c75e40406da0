"""Canonical fingerprints: what makes two submissions with one key "the same"."""

from __future__ import annotations

import hashlib

from backroom.core.job import JSON
from backroom.core.json_text import text_encoder

_CANONICAL = text_encoder(sort_keys=True, ensure_ascii=False, allow_nan=False)


def fingerprint(task: str, payload: JSON, options: dict[str, JSON] | None = None) -> str:
    """A stable hash of a submission: task, input and the options the caller set.

    Keys are sorted and separators fixed, so `{"a": 1, "b": 2}` and `{"b": 2, "a": 1}`
    give the same fingerprint.
    """
    canonical = _CANONICAL({"task": task, "input": payload, "options": options or {}})
    return hashlib.sha256(canonical.encode()).hexdigest()
