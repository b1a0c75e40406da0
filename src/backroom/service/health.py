"""Is the service up, and can it reach its store?"""

from __future__ import annotations

import logging

from backroom.core.errors import StoreError
from backroom.service.context import AppParts
from backroom.service.replies import Reply, problem
from backroom.store.protocol import WriteCheck

_log = logging.getLogger(__name__)


async def readiness(app: AppParts) -> Reply:
    """200 when the store answers a query and can write, 503 when it cannot."""
    store = app.store
    try:
        await store.get(0)
        if isinstance(store, WriteCheck):
            await store.check_writable()
    except StoreError as error:
        # Public: the cause (a database host and port, a path) goes to the log only.
        _log.warning("not ready, the store cannot serve: %s", error)
        return problem(503, "the store is unavailable", kind="store-unavailable")
    return Reply(200, {"status": "ready"})


def health() -> Reply:
    """The process is up and serving requests."""
    return Reply(200, {"status": "ok"})
