"""Fault directives: parsing, counting and the answers they script."""

from __future__ import annotations

import email.utils
import json

import pytest

from backroom.llm.mock.faults import Fault, FaultCounter, fault_response, find_fault

NOW = 1_800_000_000_000


@pytest.mark.parametrize(
    ("text", "fault"),
    [
        ("hello", None),
        ("[fault:timeout]", Fault("timeout")),
        ("please [fault:500] now", Fault("500")),
        ("[fault:insufficient_quota]", Fault("insufficient_quota")),
        ("[fault:stream_error]", Fault("stream_error")),
        ("[fault:malformed_chunk]", Fault("malformed_chunk")),
        ("[fault:cut_off:first=1]", Fault("cut_off", (("first", "1"),))),
        ("[fault:no_terminal]", Fault("no_terminal")),
        ("[fault:404:body=detail]", Fault("404", (("body", "detail"),))),
        ("[fault:503:first=2]", Fault("503", (("first", "2"),))),
        (
            "[fault:429:retry-after=1.5:retry-after-ms=250:should-retry=true]",
            Fault(
                "429",
                (("retry-after", "1.5"), ("retry-after-ms", "250"), ("should-retry", "true")),
            ),
        ),
        ("[fault:400] then [fault:500]", Fault("400")),
        ("[fault: 500]", None),  # not a directive at all
    ],
)
def test_directives_are_found_in_the_text(text: str, fault: Fault | None) -> None:
    assert find_fault(text) == fault


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[fault:boom]", "unknown fault 'boom'"),
        ("[fault:200]", "unknown fault '200'"),
        ("[fault:600]", "unknown fault '600'"),
        ("[fault:500:often=1]", "unknown fault option 'often'"),
        ("[fault:500:first=two]", "fault option first needs a whole number"),
        ("[fault:429:retry-after-date=1.5]", "fault option retry-after-date needs a whole"),
        ("[fault:404:body=xml]", "fault option body needs one of detail, empty, text"),
    ],
)
def test_malformed_directives_are_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        find_fault(text)


def test_first_n_fails_only_the_first_calls_of_each_request() -> None:
    counter = FaultCounter()
    fault = Fault("500", (("first", "2"),))
    assert [counter.fires(fault, "a") for _ in range(4)] == [True, True, False, False]
    assert counter.fires(fault, "b")
    assert all(counter.fires(Fault("500"), "a") for _ in range(3))


def test_statuses() -> None:
    assert Fault("503").status == 503
    assert Fault("insufficient_quota").status == 429
    assert Fault("stream_error").status == 500


def test_retry_after_as_an_http_date_from_the_servers_clock() -> None:
    headers = Fault("429", (("retry-after-date", "300"),)).headers(NOW)
    moment = email.utils.parsedate_to_datetime(headers["retry-after"])
    assert moment.timestamp() * 1000 == NOW + 300_000


def test_a_scripted_status_answer_keeps_the_given_headers() -> None:
    fault = Fault("429", (("retry-after", "7"),))
    response = fault_response(fault, now=NOW, headers={"x-ratelimit-limit-requests": "5"})
    assert response.status_code == 429
    assert response.headers["retry-after"] == "7"
    assert response.headers["x-ratelimit-limit-requests"] == "5"
    assert json.loads(bytes(response.body)) == {
        "error": {
            "message": "Scripted fault: HTTP 429 for this request.",
            "type": "requests",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    }


@pytest.mark.parametrize(
    ("shape", "content_type", "body"),
    [
        ("detail", "application/json", b'{"detail":"Scripted fault: 404"}'),
        ("text", "text/plain; charset=utf-8", b"404 scripted fault: not an OpenAI error body\n"),
        ("empty", "text/plain; charset=utf-8", b""),
    ],
)
def test_a_foreign_error_body(shape: str, content_type: str, body: bytes) -> None:
    fault = Fault("404", (("body", shape), ("retry-after", "1")))
    response = fault_response(fault, now=NOW, headers={})
    assert response.status_code == 404
    assert response.headers["content-type"] == content_type
    assert response.headers["retry-after"] == "1"
    assert bytes(response.body) == body


def test_insufficient_quota_looks_like_openais() -> None:
    response = fault_response(Fault("insufficient_quota"), now=NOW, headers={})
    error = json.loads(bytes(response.body))["error"]
    assert response.status_code == 429
    assert error["type"] == error["code"] == "insufficient_quota"
    assert "exceeded your current quota" in error["message"]


def test_a_fault_may_target_one_model() -> None:
    targeted = find_fault("[fault:503:model=big-1]")
    assert targeted == Fault("503", (("model", "big-1"),))
    assert targeted.applies_to("big-1")
    assert not targeted.applies_to("small-1")
    assert Fault("503").applies_to("small-1")
