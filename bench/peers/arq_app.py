"""arq at its defaults (10 jobs at once, a 0.5 s poll).

arq bench.peers.arq_app.WorkerSettings
"""

from __future__ import annotations

from typing import Any

from arq.connections import RedisSettings
from arq.worker import func

from bench.peers.env import REDIS, setting
from bench.peers.marks import mark_async


class WorkerSettings:
    """What `arq` reads: the functions and the Redis to serve."""

    functions: Any = [func(mark_async, name="noop")]
    redis_settings: Any = RedisSettings.from_dsn(setting(REDIS))
