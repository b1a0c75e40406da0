"""docs/webhooks.md's three-line verification runs as printed, on a request backroom sent."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from standardwebhooks import WebhookVerificationError
from test_webhooks import ACME, LOOPBACK, app, arrived, running, subscribe
from webhook_receiver import Answer, receiver

from backroom import App
from backroom.service.submit import Submission, SubmitPolicy, submit_job

__all__ = ["app", "running"]  # the fixtures, shared with test_webhooks

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"


def verification_example() -> str:
    """The guide's Python block under `## Verifying`."""
    section = GUIDE.read_text().split("## Verifying", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None
    return match.group(1)


def run_example(secret: str, body: str, headers: dict[str, str]) -> Any:
    """Run the example with the names it expects; the `event` it read."""
    names: dict[str, Any] = {"secret": secret, "body": body, "headers": headers}
    exec(verification_example(), names)
    return names["event"]


async def test_the_guide_verifies_a_real_delivery_in_three_lines(running: App) -> None:
    example = verification_example()
    with receiver() as hooks:
        url = hooks.script("/guide", Answer(204))
        secret = await subscribe(running, url, "job.succeeded")
        submission = Submission("work", "hello")
        reply = await submit_job(running, ACME, submission, SubmitPolicy(webhooks=LOOPBACK))
        assert reply.status == 202, reply.body
        (request,) = await arrived(hooks, "/guide", 1)

    event = run_example(secret, request.body, request.headers)

    assert len(example.strip().splitlines()) == 3
    assert event == json.loads(request.body)
    assert event["type"] == "job.succeeded"
    assert event["data"]["result"] == {"echo": "hello"}
    with pytest.raises(WebhookVerificationError):
        run_example(secret, request.body.replace("hello", "HELLO"), request.headers)
