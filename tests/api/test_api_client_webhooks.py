"""The clients' webhook methods: the requests they send, what they return, and which
of them are retried (scripted transports, both clients)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from test_api_client import FakeClock, Runner, document, problem, run, scripted

from backroom.client import InvalidRequest, ServerError

__all__ = ["run"]  # the fixture, shared with test_api_client

SUBSCRIPTION = {"id": 3, "url": "https://example.com/h", "secret": "whsec_abc"}


def test_create_sends_the_subscription_and_returns_its_secret(run: Runner) -> None:
    seen: list[httpx.Request] = []
    transport = scripted([httpx.Response(201, json=SUBSCRIPTION)], seen)

    created = run(
        transport,
        FakeClock(),
        lambda client: client.create_webhook(
            "https://example.com/h", ["job.succeeded"], tasks=["echo"]
        ),
    )

    assert created == SUBSCRIPTION
    (request,) = seen
    assert (request.method, request.url.path) == ("POST", "/v1/webhooks")
    assert json.loads(request.content) == {
        "url": "https://example.com/h",
        "event_types": ["job.succeeded"],
        "tasks": ["echo"],
        "queues": [],
    }


@pytest.mark.parametrize(
    ("call", "method", "path"),
    [
        (lambda c: c.create_webhook("https://e.com", ["job.failed"]), "POST", "/v1/webhooks"),
        (lambda c: c.rotate_webhook_secret(3), "POST", "/v1/webhooks/3/rotate-secret"),
        (lambda c: c.signing_secret(rotate=True), "POST", "/v1/webhooks/signing-secret/rotate"),
        (lambda c: c.delete_webhook(3), "DELETE", "/v1/webhooks/3"),
        (lambda c: c.redeliver(5), "POST", "/v1/deliveries/5/redeliver"),
    ],
)
def test_changes_are_not_retried(run: Runner, call: Any, method: str, path: str) -> None:
    seen: list[httpx.Request] = []
    transport = scripted([problem(503)], seen)

    with pytest.raises(ServerError):
        run(transport, FakeClock(), call)

    assert [(request.method, request.url.path) for request in seen] == [(method, path)]


@pytest.mark.parametrize(
    ("call", "path", "body", "expected"),
    [
        (
            lambda c: c.webhooks(),
            "/v1/webhooks",
            {"subscriptions": [SUBSCRIPTION]},
            [SUBSCRIPTION],
        ),
        (lambda c: c.get_webhook(3), "/v1/webhooks/3", SUBSCRIPTION, SUBSCRIPTION),
        (
            lambda c: c.signing_secret(),
            "/v1/webhooks/signing-secret",
            {"tenant": "acme", "secret": "whsec_t"},
            {"tenant": "acme", "secret": "whsec_t"},
        ),
        (
            lambda c: c.deliveries(7),
            "/v1/jobs/7/deliveries",
            {"deliveries": [{"id": 5}]},
            [{"id": 5}],
        ),
    ],
)
def test_reads_are_retried_and_unwrapped(
    run: Runner, call: Any, path: str, body: dict[str, Any], expected: Any
) -> None:
    seen: list[httpx.Request] = []
    clock = FakeClock()
    transport = scripted([problem(503), httpx.Response(200, json=body)], seen)

    found = run(transport, clock, call)

    assert found == expected
    assert [(request.method, request.url.path) for request in seen] == [("GET", path)] * 2
    assert clock.pauses == [0.2]


def test_a_deletion_returns_nothing(run: Runner) -> None:
    transport = scripted([httpx.Response(204)], [])

    assert run(transport, FakeClock(), lambda client: client.delete_webhook(3)) is None


def test_a_refused_url_is_a_typed_error(run: Runner) -> None:
    transport = scripted([problem(422, "validation-error")], [])

    with pytest.raises(InvalidRequest):
        run(transport, FakeClock(), lambda c: c.create_webhook("http://10.0.0.1/", ["job.failed"]))


def test_submit_sends_the_webhook_url(run: Runner) -> None:
    seen: list[httpx.Request] = []
    transport = scripted([httpx.Response(202, json=document())], seen)

    run(transport, FakeClock(), lambda c: c.submit("echo", 1, webhook_url="https://e.com/h"))

    assert json.loads(seen[0].content)["webhook_url"] == "https://e.com/h"
