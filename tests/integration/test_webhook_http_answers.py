"""Webhook POSTs' answers: every framing, interim answers, a body too big to read,
garbage, the request line, a receiver that never answers, and TLS."""

from __future__ import annotations

import asyncio
import ssl
import subprocess
from pathlib import Path

import pytest
from http_post_servers import OK, answering, origin, read_request, scripted

from backroom.clock import SystemClock
from backroom.webhooks.http_post import MAX_ANSWER_BODY, HttpPoster, HttpPostError
from backroom.webhooks.sender import SenderSettings, WebhookSender
from backroom.webhooks.targets import TargetPolicy

LOOPBACK = TargetPolicy.from_setting("127.0.0.1")


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
    # Kept, the connection answers both requests; not kept, a second connection does.
    scripts = (
        [answering(answer, OK, log=log)]
        if reused
        else [answering(answer, then_close=True, log=log), answering(OK, log=log)]
    )
    async with scripted(*scripts) as (port, _):
        poster = HttpPoster(SystemClock())
        first = await poster.post(origin(port), "/a", [], b"1")
        second = await poster.post(origin(port), "/b", [], b"2")
        await poster.close()

    assert (first.status, second.status) == (status, 204)
    assert len(log) == 2


async def test_a_huge_answer_body_is_not_read_and_its_connection_not_kept() -> None:
    log: list[bytes] = []
    huge = b"x" * (MAX_ANSWER_BODY * 4)
    answer = b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % len(huge) + huge
    async with scripted(answering(answer, log=log), answering(OK, log=log)) as (port, _):
        poster = HttpPoster(SystemClock())
        first = await poster.post(origin(port), "/a", [], b"1")
        second = await poster.post(origin(port), "/b", [], b"2")
        await poster.close()

    assert (first.status, second.status) == (200, 204)


async def test_garbage_is_not_an_answer() -> None:
    log: list[bytes] = []
    async with scripted(answering(b"SSH-2.0-OpenSSH_9.2\r\n", log=log)) as (port, _):
        with pytest.raises(HttpPostError, match="not an HTTP answer"):
            await HttpPoster(SystemClock()).post(origin(port), "/a", [], b"1")


async def test_the_path_is_percent_encoded_and_headers_cannot_break_lines() -> None:
    log: list[bytes] = []
    async with scripted(answering(OK, log=log)) as (port, _):
        poster = HttpPoster(SystemClock())
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

    async with scripted(silent, answering(OK, log=log)) as (port, _):
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

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await answering(OK, log=log)(reader, writer)
        except (ssl.SSLError, ConnectionError):
            pass  # the client refused our certificate
        finally:
            writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=serving)
    port = server.sockets[0].getsockname()[1]
    trusted = ssl.create_default_context(cafile=str(ca))
    try:
        answered = await HttpPoster(SystemClock(), tls=trusted).post(
            origin(port, "https", "localhost"), "/", [], b"{}"
        )
        with pytest.raises(ssl.SSLCertVerificationError):  # certifi does not know our CA
            await HttpPoster(SystemClock()).post(origin(port, "https", "localhost"), "/", [], b"{}")
        with pytest.raises(ssl.SSLCertVerificationError):  # the name is not the cert's
            await HttpPoster(SystemClock(), tls=trusted).post(
                origin(port, "https", "example.com"), "/", [], b"{}"
            )
    finally:
        server.close()

    assert answered.status == 204
    assert log and log[0].startswith(b"POST / HTTP/1.1\r\nhost: localhost:")
