"""Scripted failures: a directive in the prompt text tells the mock how to fail.

    [fault:NAME]  or  [fault:NAME:option=value:option=value]

NAME is one of
    timeout             never answer: the request hangs until the client gives up
    stream_error        a stream fails after its first delta (a plain call gets a 500)
    malformed_chunk     a stream sends a chunk that is not JSON (a plain call: half a body)
    cut_off             the connection closes mid-stream (a plain call: mid-body)
    no_terminal         a stream ends without its last event (a plain call gets a 500)
    no_usage            answer, but without usage (no usage chunk, `usage: null`)
    insufficient_quota  429 with the `insufficient_quota` code (out of credit)
    400 ... 599         that HTTP status, with an OpenAI-style error body
Options:
    first=N             fail only the first N calls with this exact request, then answer
    retry-after=V       send `retry-after: V` (seconds, or any text, sent as it is)
    retry-after-ms=V    send `retry-after-ms: V`
    provider-retry-after=V, provider-retry-after-ms=V
                        send LiteLLM's relayed `llm_provider-retry-after(-ms): V` instead
    retry-after-date=S  send `retry-after` as an HTTP date S seconds after the server's now
    should-retry=V      send `x-should-retry: V` (true or false)
    body=SHAPE          an error body not in OpenAI's shape, as other servers send: `detail`
                        (`{"detail": "Not Found"}`), `text` (plain text) or `empty`
    model=M             fail only calls to model M (others are answered), as when one
                        model of a provider has an incident and another does not
For example `[fault:429:retry-after=130]`, `[fault:503:first=2]` or `[fault:503:model=big]`.
"""

from __future__ import annotations

import email.utils
import re
from dataclasses import dataclass

from fastapi.responses import JSONResponse, PlainTextResponse, Response

from backroom.llm.mock.broken import STREAM_FAULTS
from backroom.llm.mock.errors import error_response

DIRECTIVE = re.compile(r"\[fault:([a-z0-9_]+)((?::[a-z-]+=[^:\]\s]+)*)\]")
NAMED_FAULTS = frozenset({"timeout", "insufficient_quota", "no_usage", *STREAM_FAULTS})
# Options whose value is sent as it is, under this header name.
_HEADER_OPTIONS = {
    "retry-after": "retry-after",
    "retry-after-ms": "retry-after-ms",
    "provider-retry-after": "llm_provider-retry-after",
    "provider-retry-after-ms": "llm_provider-retry-after-ms",
    "should-retry": "x-should-retry",
}
_OPTIONS = frozenset({"first", "retry-after-date", "body", "model", *_HEADER_OPTIONS})
_BODY_SHAPES = frozenset({"detail", "text", "empty"})
_LOWEST_ERROR, _HIGHEST_ERROR = 400, 599
_SERVER_ERROR = 500


@dataclass(frozen=True, slots=True)
class Fault:
    """One parsed directive: what to fail with, how often, and which headers to send."""

    name: str
    options: tuple[tuple[str, str], ...] = ()

    @property
    def first(self) -> int | None:
        """How many calls with the same request fail before it is answered; None: all."""
        value = dict(self.options).get("first")
        return None if value is None else int(value)

    @property
    def status(self) -> int:
        """The HTTP status this fault answers with (timeouts never answer)."""
        if self.name == "insufficient_quota":
            return 429
        if self.name in NAMED_FAULTS:
            return _SERVER_ERROR
        return int(self.name)

    def applies_to(self, model: str) -> bool:
        """Whether the directive fails calls to `model` (all models without `model=`)."""
        wanted = dict(self.options).get("model")
        return wanted is None or wanted == model

    def headers(self, now: int) -> dict[str, str]:
        """The retry headers the directive asks for; `now` is ms since the epoch."""
        headers: dict[str, str] = {}
        for option, value in self.options:
            if option == "retry-after-date":
                moment_s = now / 1000 + int(value)
                headers["retry-after"] = email.utils.formatdate(moment_s, usegmt=True)
            elif option in _HEADER_OPTIONS:
                headers[_HEADER_OPTIONS[option]] = value
        return headers


def _checked(name: str, options: tuple[tuple[str, str], ...]) -> Fault:
    if name not in NAMED_FAULTS and not (
        name.isdigit() and _LOWEST_ERROR <= int(name) <= _HIGHEST_ERROR
    ):
        named = ", ".join(sorted(NAMED_FAULTS))
        raise ValueError(f"unknown fault {name!r}: use an HTTP status or one of {named}")
    for option, value in options:
        if option not in _OPTIONS:
            known = ", ".join(sorted(_OPTIONS))
            raise ValueError(f"unknown fault option {option!r}: use one of {known}")
        if option in {"first", "retry-after-date"} and not value.isdigit():
            raise ValueError(f"fault option {option} needs a whole number, not {value!r}")
        if option == "body" and value not in _BODY_SHAPES:
            shapes = ", ".join(sorted(_BODY_SHAPES))
            raise ValueError(f"fault option body needs one of {shapes}, not {value!r}")
    return Fault(name, options)


def find_fault(text: str) -> Fault | None:
    """The first fault directive in `text`, or None; ValueError if it is malformed."""
    match = DIRECTIVE.search(text)
    if match is None:
        return None
    pairs = [part.split("=", 1) for part in match.group(2).split(":") if part]
    return _checked(match.group(1), tuple((option, value) for option, value in pairs))


class FaultCounter:
    """Counts how often each request met its fault, for `first=N`."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def fires(self, fault: Fault, request_key: str) -> bool:
        """Whether `fault` applies to this call of the request named `request_key`."""
        limit = fault.first
        if limit is None:
            return True
        count = self._seen.get(request_key, 0)
        self._seen[request_key] = count + 1
        return count < limit


def _foreign_body(shape: str, status: int, headers: dict[str, str]) -> Response:
    """An error answer in the `body=` shape: what a server other than OpenAI's might send."""
    if shape == "detail":
        return JSONResponse({"detail": f"Scripted fault: {status}"}, status, headers)
    text = f"{status} scripted fault: not an OpenAI error body\n" if shape == "text" else ""
    return PlainTextResponse(text, status, headers)


def fault_response(fault: Fault, *, now: int, headers: dict[str, str]) -> Response:
    """The scripted error answer for `fault`, with `headers` and the directive's own."""
    all_headers = headers | fault.headers(now)
    shape = dict(fault.options).get("body")
    if shape is not None:
        return _foreign_body(shape, fault.status, all_headers)
    if fault.name == "insufficient_quota":
        return error_response(
            429,
            "You exceeded your current quota, please check your plan and billing details.",
            error_type="insufficient_quota",
            code="insufficient_quota",
            headers=all_headers,
        )
    code = "rate_limit_exceeded" if fault.status == 429 else None
    message = f"Scripted fault: HTTP {fault.status} for this request."
    return error_response(fault.status, message, code=code, headers=all_headers)
