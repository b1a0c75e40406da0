"""A delivery worker SIGKILLed between sending a webhook and recording it.

A real `backroom worker` POSTs to a loopback receiver that holds its answer, so the
worker is mid-request when it is killed: the receiver has the message, the store has
no record of it. Once the lease runs out a second worker sends it again, under the same
`webhook-id` and with a valid signature, and the delivery ends `succeeded`. On a SQLite
file and on a PostgreSQL schema of the test's own.
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import pytest
from deadline_polls import wait_until
from standardwebhooks import Webhook
from webhook_processes import (
    all_succeeded,
    deliveries,
    start_worker,
    stop,
    submit,
    subscribe,
)
from webhook_receiver import Answer, receiver

pytestmark = pytest.mark.slow


def test_a_delivery_cut_off_by_sigkill_is_sent_again_under_the_same_id(
    database_url: str, tmp_path: Path
) -> None:
    release = threading.Event()
    with receiver() as hooks:
        url = hooks.script("/hooks", Answer(200, hold=release), Answer(200))
        secret = subscribe(database_url, url)
        (job_id,) = submit(database_url, 1)
        victim = start_worker(database_url, tmp_path / "victim.log", "--lease", "1")
        survivor = None
        try:
            hooks.wait_for("/hooks", 1, 60)
            victim.send_signal(signal.SIGKILL)
            victim.wait(timeout=10)
            release.set()
            survivor = start_worker(database_url, tmp_path / "survivor.log", "--lease", "1")
            hooks.wait_for("/hooks", 2, 60)

            wait_until(lambda: all_succeeded(database_url, [job_id]), "the delivery to succeed")
        finally:
            release.set()
            stop(victim)
            code = None if survivor is None else stop(survivor)
        requests = hooks.at("/hooks")

    assert code == 0, (tmp_path / "survivor.log").read_text()
    assert len(requests) == 2
    first, again = requests
    (delivery,) = deliveries(database_url, [job_id])[job_id]
    assert first.headers["webhook-id"] == again.headers["webhook-id"] == delivery["webhook_id"]
    for request in requests:
        body = Webhook(secret).verify(request.body, request.headers)
        assert body["type"] == "job.succeeded"
        assert body["data"]["job_id"] == job_id
    assert first.body == again.body
    assert delivery["last_status"] == 200
    # Only the survivor's attempt was recorded: the victim died before it could record.
    assert [attempt["status"] for attempt in delivery["attempt_history"]] == [200]
