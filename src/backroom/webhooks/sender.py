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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from backroom.clock import Clock
from backroom.core.retry_after import retry_after_ms
from backroom.version import __version__
from backroom.webhooks.targets import TargetPolicy, check_target

if TYPE_CHECKING:
    import httpx

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
    """How POSTs are sent: the wait for an answer, and how many go to one receiver at once."""

    timeout_s: float = 10.0
    per_receiver: int = 8
    policy: TargetPolicy = field(default_factory=TargetPolicy)


class WebhookSender:
    """POSTs signed bodies to checked webhook URLs over one pooled HTTP client."""

    def __init__(
        self,
        clock: Clock,
        settings: SenderSettings | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._clock = clock
        self._settings = settings or SenderSettings()
        self._gates: dict[tuple[str, int], asyncio.Semaphore] = {}
        self._transport = transport
        self._pooled: httpx.AsyncClient | None = None
        self._closed = False

    @property
    def _client(self) -> httpx.AsyncClient:
        """The pooled client, made for the first POST: its TLS context costs a worker
        ~25 ms of CPU at start-up, and most workers never send a webhook."""
        if self._pooled is None:
            if self._closed:
                raise RuntimeError("the webhook sender is closed")
            # Imported here, not at the top: httpx loads rich, click and pygments, ~100 ms
            # of CPU at the start of every worker process, most of which never POST.
            import httpx  # noqa: PLC0415

            self._pooled = httpx.AsyncClient(
                follow_redirects=False,
                timeout=self._settings.timeout_s,
                trust_env=False,
                transport=self._transport,
                limits=httpx.Limits(max_connections=None, max_keepalive_connections=64),
            )
        return self._pooled

    async def post(self, url: str, body: str, headers: dict[str, str]) -> Answer:
        """POST `body` to `url`; raises `WebhookTargetRefused` if the URL may not be called."""
        import httpx  # noqa: PLC0415  (see `_client`)

        target = await check_target(url, self._settings.policy)
        gate = self._gates.setdefault(
            (target.host, target.port), asyncio.Semaphore(self._settings.per_receiver)
        )
        async with gate:
            started = self._clock.now()
            try:
                response = await self._client.post(
                    target.connect_url,
                    content=body.encode(),
                    headers={
                        **headers,
                        "host": target.host_header,
                        "content-type": "application/json",
                        "user-agent": _USER_AGENT,
                    },
                    extensions={"sni_hostname": target.host} if target.scheme == "https" else {},
                )
            except httpx.TimeoutException:
                timeout = self._settings.timeout_s
                return Answer(
                    None, self._clock.now() - started, error=f"no answer in {timeout:g} s"
                )
            except httpx.HTTPError as error:
                reason = str(error) or type(error).__name__
                return Answer(None, self._clock.now() - started, error=f"cannot connect: {reason}")
        latency_ms = self._clock.now() - started
        return _answer(response, latency_ms, self._clock.now())

    async def close(self) -> None:
        """Close the pooled connections."""
        self._closed = True
        if self._pooled is not None:
            await self._pooled.aclose()


def _answer(response: httpx.Response, latency_ms: int, now: int) -> Answer:
    status = response.status_code
    wait = retry_after_ms(response.headers, now=now) if status in _RETRY_AFTER_STATUSES else None
    if 200 <= status < 300:
        return Answer(status, latency_ms)
    if 300 <= status < 400:
        error = f"HTTP {status}: redirects are not followed"
    else:
        error = f"HTTP {status}"
    return Answer(status, latency_ms, wait, error)
