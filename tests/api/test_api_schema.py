"""schemathesis against /openapi.json: generated requests, valid and invalid, never get
a 5xx, and every answer matches the status, media type and schema the document gives.

Bounded (a few examples per operation) to stay fast; it runs the app in-process.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from ipaddress import ip_address
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
from backroom.api.settings import ApiSettings
from backroom.webhooks.targets import IPAddress, TargetPolicy


async def public_resolver(host: str, port: int) -> list[IPAddress]:
    """Every name is one public address, without asking any DNS server."""
    return [ip_address("93.184.215.14")]


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
# The event streams stay open until their job ends (or forever, for the feed): they are
# tested by following them (tests/api/test_api_events.py), not by generated requests.
# Webhook URLs are checked against addresses answered offline, never by a DNS lookup.
OFFLINE = ApiSettings(webhook_policy=TargetPolicy(resolve=public_resolver))
schema = schemathesis.openapi.from_asgi("/openapi.json", create_api(APP, OFFLINE)).exclude(
    tag="events"
)


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
