"""Celery at its defaults: the RabbitMQ broker at localhost, no result backend, prefork.

celery -A bench.peers.celery_app worker
"""

from __future__ import annotations

from typing import Any

from celery import Celery

from bench.peers.marks import mark

app: Any = Celery("bench")
noop: Any = app.task(name="noop")(mark)
