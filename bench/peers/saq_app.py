"""SAQ at its defaults (10 jobs at once).

saq bench.peers.saq_app.settings
"""

from __future__ import annotations

from typing import Any

from saq import Queue

from bench.peers.env import REDIS, setting
from bench.peers.marks import mark_async

queue: Any = Queue.from_url(setting(REDIS))
settings: dict[str, Any] = {"queue": queue, "functions": [("noop", mark_async)]}
