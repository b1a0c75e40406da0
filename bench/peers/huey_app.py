"""huey with its SQLite storage, at its defaults (one worker thread).

huey_consumer bench.peers.huey_app.huey
"""

from __future__ import annotations

from typing import Any

from huey import SqliteHuey

from bench.peers.env import SQLITE, setting
from bench.peers.marks import mark

huey: Any = SqliteHuey(filename=setting(SQLITE))
noop: Any = huey.task(name="noop")(mark)
