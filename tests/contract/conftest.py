"""The `store` fixture: every contract test runs once per backend in `backends.BACKENDS`.

No backend may skip a test; the PostgreSQL runs skip only when the server is
unreachable, and fail then too under BACKROOM_REQUIRE_POSTGRES=1.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from backends import BACKENDS, ContractBackend
from contract_support import Backend

from backroom.store.protocol import Store


@pytest.fixture(
    params=[pytest.param(backend, id=backend.name, marks=backend.marks) for backend in BACKENDS]
)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[ContractBackend, str]:
    """The backend of one contract test, and where its database lives (each in turn).

    Synchronous, so that the session's PostgreSQL database is made outside any event loop.
    """
    backend: ContractBackend = request.param
    return backend, backend.locate(request, tmp_path)


@pytest.fixture
async def backend(database: tuple[ContractBackend, str]) -> AsyncIterator[Backend]:
    """Opens stores on the test's database, made ready for it."""
    chosen, location = database
    opened = Backend(await chosen.opener(location))
    try:
        yield opened
    finally:
        await opened.close_all()


@pytest.fixture
async def store(backend: Backend) -> Store:
    """A migrated, empty store."""
    return await backend.open()
