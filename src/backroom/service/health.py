"""Is the service up, and can it reach its store?"""

from __future__ import annotations

import logging

from backroom.core.errors import StoreError
from backroom.service.context import AppParts
from backroom.service.replies import Reply, problem

_log = logging.getLogger(__name__)


async def readiness(app: AppParts) -> Reply:
    """200 when the store answers a query, 503 when it does not."""
    try:
        await app.store.get(0)
    except StoreError as error:
        # Public: the cause (a database host and port, a path) goes to the log only.
        _log.warning("not ready, the store is unreachable: %s", error)
        return problem(503, "the store is unreachable", kind="store-unavailable")
    return Reply(200, {"status": "ready"})


def health() -> Reply:
    """The process is up and serving requests."""
    return Reply(200, {"status": "ok"})
