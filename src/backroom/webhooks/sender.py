"""Sending one webhook POST: to the checked address, no redirects, a bounded wait.

Each POST checks its URL again (DNS may have changed since the subscription was made)
and connects to the address it checked, with the URL's name in the `Host` header and,
for https, in the TLS handshake (SNI and certificate check): no second lookup that a
hostile DNS server could answer differently. Redirects are not followed, since the
place they point to was never checked. A few POSTs at a time go to one receiver, so a
slow one cannot hold every sending slot and starve the others.
"""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass, field

from backroom.clock import Clock
from backroom.core.retry_after import retry_after_ms
from backroom.version import __version__
from backroom.webhooks.http_post import HttpAnswer, HttpPoster, HttpPostError, Origin
from backroom.webhooks.targets import Target, TargetPolicy, check_target

_USER_AGENT = f"backroom-webhooks/{__version__}"
_RETRY_AFTER_STATUSES = frozenset({429, 503})


@dataclass(frozen=True, slots=True)
class Answer:
    """How a receiver answered one POST: its status (None: no answer), latency and wait."""

    status: int | None
    latency_ms: int
    retry_after_ms: int | None = None
    error: str | None = None

    @property
    def delivered(self) -> bool:
        """Only a 2xx answer delivers."""
        return self.status is not None and 200 <= self.status < 300


@dataclass(frozen=True, slots=True)
class SenderSettings:
    """How POSTs are sent: the wait for an answer, how many go to one receiver at once,
    and (`tls`) the certificate authorities https receivers are checked against (None:
    certifi's)."""

    timeout_s: float = 10.0
    per_receiver: int = 8
    policy: TargetPolicy = field(default_factory=TargetPolicy)
    tls: ssl.SSLContext | None = None


class WebhookSender:
    """POSTs signed bodies to checked webhook URLs over kept-alive connections."""

    def __init__(self, clock: Clock, settings: SenderSettings | None = None) -> None:
        self._clock = clock
        self._settings = settings or SenderSettings()
        self._gates: dict[tuple[str, int], asyncio.Semaphore] = {}
        self._poster = HttpPoster(clock, tls=self._settings.tls, keep=self._settings.per_receiver)
        self._closed = False

    async def post(self, url: str, body: str, headers: dict[str, str]) -> Answer:
        """POST `body` to `url`; raises `WebhookTargetRefused` if the URL may not be called."""
        if self._closed:
            raise RuntimeError("the webhook sender is closed")
        target = await check_target(url, self._settings.policy)
        gate = self._gates.setdefault(
            (target.host, target.port), asyncio.Semaphore(self._settings.per_receiver)
        )
        sent = [*headers.items(), ("content-type", "application/json")]
        sent.append(("user-agent", _USER_AGENT))
        async with gate:
            started = self._clock.now()
            try:
                async with asyncio.timeout(self._settings.timeout_s):
                    answer = await self._poster.post(
                        _origin(target), target.path, sent, body.encode()
                    )
            except TimeoutError:
                timeout = self._settings.timeout_s
                return Answer(
                    None, self._clock.now() - started, error=f"no answer in {timeout:g} s"
                )
            except (HttpPostError, OSError) as error:
                reason = str(error) or type(error).__name__
                return Answer(None, self._clock.now() - started, error=f"cannot connect: {reason}")
        latency_ms = self._clock.now() - started
        return _answer(answer, latency_ms, self._clock.now())

    async def close(self) -> None:
        """Close the kept connections."""
        self._closed = True
        await self._poster.close()


def _origin(target: Target) -> Origin:
    address = str(target.address)
    return Origin(target.scheme, address, target.port, target.host, target.host_header)


def _answer(response: HttpAnswer, latency_ms: int, now: int) -> Answer:
    status = response.status
    wait = retry_after_ms(response.headers, now=now) if status in _RETRY_AFTER_STATUSES else None
    if 200 <= status < 300:
        return Answer(status, latency_ms)
    if 300 <= status < 400:
        error = f"HTTP {status}: redirects are not followed"
    else:
        error = f"HTTP {status}"
    return Answer(status, latency_ms, wait, error)
