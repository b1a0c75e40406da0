"""schemathesis against /openapi.json: generated requests, valid and invalid, never get
a 5xx, and every answer matches the status, media type and schema the document gives.

Bounded (a few examples per operation) to stay fast; it runs the app in-process.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from api_support import create_tenants, register_tasks
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from backroom import App
from backroom.api import create_api

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


# schemathesis reads the document when the module loads (its lazy fixture loader does
# not work with this pytest), so the app exists from then on; the fixture below gives
# it a database before anything uses its store.
APP = App()
register_tasks(APP)
schema = schemathesis.openapi.from_asgi("/openapi.json", create_api(APP))


@pytest.fixture(scope="module")
def api_key(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Open the app on a fresh database with the test tenants; the key of one tenant."""
    path = tmp_path_factory.mktemp("schema") / "schema.db"
    APP.use_database(f"sqlite:///{path}")
    asyncio.run(APP.open())
    keys = asyncio.run(create_tenants(APP))
    yield keys.acme
    asyncio.run(APP.close())


@schema.parametrize()
@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_every_answer_matches_the_document(case: schemathesis.Case[Any], api_key: str) -> None:
    case.call_and_validate(headers={"Authorization": f"Bearer {api_key}"}, checks=CHECKS)
