"""Webhook POSTs on kept connections: reuse, receivers that close them while kept or as
a request goes out, and the limits on how many are kept and for how long."""

from __future__ import annotations

import asyncio

import pytest
from deadline_polls import serving, until
from http_post_servers import (
    OK,
    answering,
    asgi_app,
    async_of,
    origin,
    read_request,
    scripted,
)
from manual_clock import ManualClock

from backroom.clock import SystemClock
from backroom.webhooks.http_post import HttpPoster, HttpPostError


async def test_posts_to_uvicorn_reuse_one_kept_connection() -> None:
    poster = HttpPoster(SystemClock())
    with serving(asgi_app) as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        first = await poster.post(origin(port), "/ok", [("x-a", "1")], b"{}")
        second = await poster.post(origin(port), "/ok", [], b'{"n":2}')
        busy = await poster.post(origin(port), "/busy", [], b"{}")
        chunked = await poster.post(origin(port), "/chunked", [], b"{}")
        await poster.close()

    assert (first.status, second.status, busy.status, chunked.status) == (204, 204, 429, 200)
    assert first.headers["x-client-port"] == second.headers["x-client-port"]
    assert busy.headers["retry-after"] == "7"


async def test_kept_connections_are_let_go_when_stale_or_too_many() -> None:
    clock = ManualClock(0)
    poster = HttpPoster(clock, keep_total=2, idle_ms=5_000)
    with serving(asgi_app) as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        named = [origin(port, host=name) for name in ("a.test", "b.test", "c.test")]
        first = await poster.post(named[0], "/ok", [], b"{}")
        clock.ms = 5_000
        fresh = await poster.post(named[0], "/ok", [], b"{}")
        clock.ms = 10_001
        stale = await poster.post(named[0], "/ok", [], b"{}")
        for each in named[1:]:
            await poster.post(each, "/ok", [], b"{}")
        kept = [poster.kept(each) for each in named]
        clock.ms = 20_000
        await poster.post(named[2], "/ok", [], b"{}")  # room made: the stale ones go
        after = [poster.kept(each) for each in named]
        await poster.close()

    assert first.headers["x-client-port"] == fresh.headers["x-client-port"]
    assert stale.headers["x-client-port"] != fresh.headers["x-client-port"]
    assert kept == [1, 1, 0]  # two kept in all: the third origin's was closed
    assert after == [0, 0, 1]


async def test_a_connection_the_receiver_closed_while_kept_is_not_used_again() -> None:
    log: list[bytes] = []
    async with scripted(answering(OK, then_close=True, log=log), answering(OK, log=log)) as (
        port,
        _,
    ):
        poster = HttpPoster(SystemClock())
        await poster.post(origin(port), "/a", [], b"1")
        await until(async_of(lambda: poster.kept(origin(port)) == 0), "the close to arrive")
        again = await poster.post(origin(port), "/b", [], b"2")
        await poster.close()

    assert again.status == 204
    assert [request.split(b" ")[1] for request in log] == [b"/a", b"/b"]


async def test_a_request_lost_as_the_receiver_closes_a_kept_connection_is_sent_once_more() -> None:
    log: list[bytes] = []

    async def read_then_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        log.append(await read_request(reader))
        writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")
        await writer.drain()
        log.append(await read_request(reader))  # the second request: closed unanswered

    ok = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"
    async with scripted(read_then_close, answering(ok, log=log)) as (port, _):
        poster = HttpPoster(SystemClock())
        await poster.post(origin(port), "/a", [], b"1")
        resent = await poster.post(origin(port), "/b", [], b"2")
        await poster.close()

    assert resent.status == 200
    assert [request.split(b" ")[1] for request in log] == [b"/a", b"/b", b"/b"]


async def test_a_new_connection_closed_unanswered_is_an_error_not_a_resend() -> None:
    log: list[bytes] = []

    async def close_unanswered(reader: asyncio.StreamReader, _: asyncio.StreamWriter) -> None:
        log.append(await read_request(reader))

    async with scripted(close_unanswered) as (port, _):
        with pytest.raises(HttpPostError, match="closed before an answer"):
            await HttpPoster(SystemClock()).post(origin(port), "/a", [], b"1")

    assert len(log) == 1
