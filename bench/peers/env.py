"""Where each system's worker finds its broker or database: environment variables the
runner sets for the worker process (and for itself, before importing an app module)."""

from __future__ import annotations

import os

POSTGRES = "BENCH_POSTGRES_URL"
REDIS = "BENCH_REDIS_URL"
SQLITE = "BENCH_SQLITE_FILE"


def setting(name: str) -> str:
    """The value of `name`, with a readable error when the runner did not set it."""
    try:
        return os.environ[name]
    except KeyError:
        raise SystemExit(f"{name} is not set: run this through python -m bench.peers.run") from None
