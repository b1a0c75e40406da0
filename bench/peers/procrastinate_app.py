"""Procrastinate at its defaults (psycopg 3, one job at a time, LISTEN/NOTIFY).

procrastinate --app=bench.peers.procrastinate_app.app worker
"""

from __future__ import annotations

from typing import Any

import procrastinate

from bench.peers.env import POSTGRES, setting
from bench.peers.marks import mark_async

app: Any = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=setting(POSTGRES)))
noop: Any = app.task(name="noop")(mark_async)
