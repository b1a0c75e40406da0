"""Canonical fingerprints: what makes two submissions with one key "the same"."""

from __future__ import annotations

import hashlib
import json

from backroom.core.job import JSON

# One encoder for every call: `json.dumps` with options builds a new one each time.
_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def fingerprint(task: str, payload: JSON, options: dict[str, JSON] | None = None) -> str:
    """A stable hash of a submission: task, input and the options the caller set.

    Keys are sorted and separators fixed, so `{"a": 1, "b": 2}` and `{"b": 2, "a": 1}`
    give the same fingerprint.
    """
    canonical = _CANONICAL.encode({"task": task, "input": payload, "options": options or {}})
    return hashlib.sha256(canonical.encode()).hexdigest()
