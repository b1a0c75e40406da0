"""The HTTP client under the providers' SDK clients: a request whose connection was lost
before any answer is sent once more, at once.

A server closes a keep-alive connection after it has idled a while: uvicorn, and
LiteLLM's proxy and many OpenAI-compatible servers on it, after 5 s, which is as long
as the SDKs' client keeps one. A request sent on such a connection just as the server
closes it fails unanswered ("Server disconnected without sending a response", or a
reset), though the server never read it. The SDKs retry that themselves; backroom turns
their retries off to apply its own policy, which would count it as the provider's
failure: an attempt spent, a backoff waited, a step towards the lane's breaker. So
such a request is sent once more, on another connection (the pool has dropped the lost
one), and only a second loss reaches the SDK. A timeout, or any answer (a 5xx too), is
never sent again here. Only a body held in memory (the SDKs' JSON) can be sent twice.
"""

from __future__ import annotations

import httpx2

LOST_BEFORE_ANSWER = (httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.WriteError)
"""How a request's connection fails before any answer comes: closed (EOF), reset, or
broken while the request was written."""

LIMITS = httpx2.Limits(max_connections=1000, max_keepalive_connections=100, keepalive_expiry=5.0)
"""The SDKs' own connection limits (`DEFAULT_CONNECTION_LIMITS` of both)."""


class ResendOnLostConnection(httpx2.AsyncBaseTransport):
    """A transport that sends a request once more when its connection is lost before
    any answer (see the module)."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send `request`; once more if the connection is lost before an answer."""
        try:
            return await self._inner.handle_async_request(request)
        except LOST_BEFORE_ANSWER:
            if not isinstance(request.stream, httpx2.ByteStream):
                raise  # a streamed upload may be half read: it cannot be sent again
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        """Close the pooled connections."""
        await self._inner.aclose()


def provider_http_client(timeout_s: float) -> httpx2.AsyncClient:
    """A client as the SDKs make their own (limits, redirects followed), whose requests
    are sent once more when a connection is lost before any answer."""
    transport = ResendOnLostConnection(httpx2.AsyncHTTPTransport(limits=LIMITS))
    return httpx2.AsyncClient(transport=transport, timeout=timeout_s, follow_redirects=True)
