"""Webhook POSTs on the wire: kept connections, receivers that close them, answers of
every framing, interim answers, timeouts and TLS, against real loopback servers.

uvicorn (the server many receivers run) answers the ordinary case; a scripted asyncio
server does what a well-behaved one never would, on purpose.
"""

from __future__ import annotations

import asyncio
import ssl
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from deadline_polls import serving, until

from backroom.clock import SystemClock
from backroom.webhooks.http_post import MAX_ANSWER_BODY, HttpPoster, HttpPostError, Origin
from backroom.webhooks.sender import SenderSettings, WebhookSender
from backroom.webhooks.targets import TargetPolicy

LOOPBACK = TargetPolicy.from_setting("127.0.0.1")
Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def async_of(predicate: Callable[[], bool]) -> Callable[[], Awaitable[bool]]:
    async def condition() -> bool:
        return predicate()

    return condition


def origin(port: int, scheme: str = "http", host: str = "127.0.0.1") -> Origin:
    return Origin(scheme, "127.0.0.1", port, host, f"{host}:{port}")


async def read_request(reader: asyncio.StreamReader) -> bytes:
    """One whole request (headers and its content-length body)."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    return head + await reader.readexactly(length)


@asynccontextmanager
async def scripted(*scripts: Script) -> AsyncIterator[tuple[int, list[bytes]]]:
    """A server whose n-th connection runs `scripts[n]`; its port and the requests read."""
    requests: list[bytes] = []
    connections = iter(scripts)

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await next(connections)(reader, writer)
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield port, requests
    finally:
        server.close()


def answering(*answers: bytes, then_close: bool = False, log: list[bytes]) -> Script:
    """Read a request and write each answer in turn, then wait for the client to leave."""

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for answer in answers:
            log.append(await read_request(reader))
            writer.write(answer)
            await writer.drain()
        if then_close:
            return
        await reader.read()  # until the client closes

    return script


async def asgi_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """204 for /ok; a chunked 200 for /chunked; 429 with Retry-After for /busy."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    client_port = str(scope["client"][1]).encode()
    if scope["path"] == "/chunked":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        for part in (b"hello ", b"world", b""):
            await send({"type": "http.response.body", "body": part, "more_body": part != b""})
        return
    status, headers = (429, [(b"retry-after", b"7")]) if scope["path"] == "/busy" else (204, [])
    headers.append((b"x-client-port", client_port))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


async def test_posts_to_uvicorn_reuse_one_kept_connection() -> None:
    poster = HttpPoster()
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


async def test_a_connection_the_receiver_closed_while_kept_is_not_used_again() -> None:
    log: list[bytes] = []
    ok = b"HTTP/1.1 204 No Content\r\n\r\n"
    async with scripted(answering(ok, then_close=True, log=log), answering(ok, log=log)) as (
        port,
        _,
    ):
        poster = HttpPoster()
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
        poster = HttpPoster()
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
            await HttpPoster().post(origin(port), "/a", [], b"1")

    assert len(log) == 1


@pytest.mark.parametrize(
    ("answer", "status", "reused"),
    [
        (
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n",
            201,
            True,
        ),
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", 200, True),
        (b"HTTP/1.1 503 Busy\r\nconnection: close\r\ncontent-length: 0\r\n\r\n", 503, False),
        (b"HTTP/1.0 200 OK\r\n\r\nread until the connection closes", 200, False),
    ],
)
async def test_answers_of_every_framing_are_read_whole(
    answer: bytes, status: int, reused: bool
) -> None:
    log: list[bytes] = []
    ok = b"HTTP/1.1 204 No Content\r\n\r\n"
    # Kept, the connection answers both requests; not kept, a second connection does.
    scripts = (
        [answering(answer, ok, log=log)]
        if reused
        else [answering(answer, then_close=True, log=log), answering(ok, log=log)]
    )
    async with scripted(*scripts) as (port, _):
        poster = HttpPoster()
        first = await poster.post(origin(port), "/a", [], b"1")
        second = await poster.post(origin(port), "/b", [], b"2")
        await poster.close()

    assert (first.status, second.status) == (status, 204)
    assert len(log) == 2


async def test_a_huge_answer_body_is_not_read_and_its_connection_not_kept() -> None:
    log: list[bytes] = []
    huge = b"x" * (MAX_ANSWER_BODY * 4)
    answer = b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % len(huge) + huge
    ok = b"HTTP/1.1 204 No Content\r\n\r\n"
    async with scripted(answering(answer, log=log), answering(ok, log=log)) as (port, _):
        poster = HttpPoster()
        first = await poster.post(origin(port), "/a", [], b"1")
        second = await poster.post(origin(port), "/b", [], b"2")
        await poster.close()

    assert (first.status, second.status) == (200, 204)


async def test_garbage_is_not_an_answer() -> None:
    log: list[bytes] = []
    async with scripted(answering(b"SSH-2.0-OpenSSH_9.2\r\n", log=log)) as (port, _):
        with pytest.raises(HttpPostError, match="not an HTTP answer"):
            await HttpPoster().post(origin(port), "/a", [], b"1")


async def test_the_path_is_percent_encoded_and_headers_cannot_break_lines() -> None:
    log: list[bytes] = []
    ok = b"HTTP/1.1 204 No Content\r\n\r\n"
    async with scripted(answering(ok, log=log)) as (port, _):
        poster = HttpPoster()
        await poster.post(origin(port), "/in box?q=a b&x=%41", [], b"1")
        with pytest.raises(HttpPostError, match="line break"):
            await poster.post(origin(port), "/", [("x-evil", "a\r\nx-injected: 1")], b"1")
        await poster.close()

    assert log[0].startswith(b"POST /in%20box?q=a%20b&x=%41 HTTP/1.1\r\n")


async def test_a_receiver_that_never_answers_times_out_and_the_next_post_goes_through() -> None:
    log: list[bytes] = []

    async def silent(reader: asyncio.StreamReader, _: asyncio.StreamWriter) -> None:
        log.append(await read_request(reader))
        await reader.read()

    ok = b"HTTP/1.1 204 No Content\r\n\r\n"
    async with scripted(silent, answering(ok, log=log)) as (port, _):
        sender = WebhookSender(SystemClock(), SenderSettings(timeout_s=0.2, policy=LOOPBACK))
        url = f"http://127.0.0.1:{port}/hook"
        slow = await sender.post(url, "{}", {})
        fine = await sender.post(url, "{}", {})
        await sender.close()

    assert (slow.status, slow.error) == (None, "no answer in 0.2 s")
    assert fine.delivered


def certificate_authority(folder: Path) -> tuple[Path, Path, Path]:
    """A CA, and a certificate it signed for `localhost`: (ca.pem, cert.pem, key.pem)."""
    ca, ca_key = folder / "ca.pem", folder / "ca-key.pem"
    cert, key, request = folder / "cert.pem", folder / "key.pem", folder / "cert.csr"
    extensions = folder / "ext.cnf"
    extensions.write_text("subjectAltName=DNS:localhost\n")
    commands = [
        f"req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=test-ca -keyout {ca_key} -out {ca}",
        f"req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout {key} -out {request}",
        f"x509 -req -in {request} -CA {ca} -CAkey {ca_key} -CAcreateserial -days 2 "
        f"-extfile {extensions} -out {cert}",
    ]
    for command in commands:
        subprocess.run(["openssl", *command.split()], check=True, capture_output=True)
    return ca, cert, key


@pytest.mark.slow
async def test_https_is_verified_against_the_certificate_authorities_given(
    tmp_path: Path,
) -> None:
    ca, cert, key = certificate_authority(tmp_path)
    serving = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    serving.load_cert_chain(cert, key)
    log: list[bytes] = []
    ok = b"HTTP/1.1 204 No Content\r\n\r\n"

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await answering(ok, log=log)(reader, writer)
        except (ssl.SSLError, ConnectionError):
            pass  # the client refused our certificate
        finally:
            writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=serving)
    port = server.sockets[0].getsockname()[1]
    trusted = ssl.create_default_context(cafile=str(ca))
    try:
        answered = await HttpPoster(tls=trusted).post(
            origin(port, "https", "localhost"), "/", [], b"{}"
        )
        with pytest.raises(ssl.SSLCertVerificationError):  # certifi does not know our CA
            await HttpPoster().post(origin(port, "https", "localhost"), "/", [], b"{}")
        with pytest.raises(ssl.SSLCertVerificationError):  # the name is not the cert's
            await HttpPoster(tls=trusted).post(origin(port, "https", "example.com"), "/", [], b"{}")
    finally:
        server.close()

    assert answered.status == 204
    assert log and log[0].startswith(b"POST / HTTP/1.1\r\nhost: localhost:")
