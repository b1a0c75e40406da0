"""`backroom mock-llm`: an OpenAI- and Anthropic-compatible server for tests, examples
and benchmarks."""

from __future__ import annotations

from typing import Annotated

import typer

CHARGE_AT = ("usage", "admission", "completion")
"""The values of `backroom.llm.mock.charge.ChargeAt`, named here: importing anything of
`backroom.llm` loads both LLM SDKs (~2 s of CPU), which every other command, the worker
first, would pay at start-up."""


_CHARGE_AT_HELP = (
    "When tokens count against --tpm: usage (the real usage at admission), admission "
    "(input + max_output_tokens at admission, OpenAI's way) or completion (the real "
    "usage when the answer is sent)."
)


def _charge_at_choice(value: str) -> str:
    if value not in CHARGE_AT:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(CHARGE_AT)}")
    return value


def mock_llm(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port.")] = 8100,
    latency_ms: Annotated[int, typer.Option(min=0, help="Wait before each answer.")] = 0,
    rpm: Annotated[
        int | None, typer.Option(min=1, help="Requests per minute before a 429.")
    ] = None,
    tpm: Annotated[int | None, typer.Option(min=1, help="Tokens per minute before a 429.")] = None,
    stream_interval_ms: Annotated[
        int, typer.Option(min=0, help="Wait between two streamed deltas.")
    ] = 25,
    charge_at: Annotated[
        str, typer.Option(callback=_charge_at_choice, help=_CHARGE_AT_HELP)
    ] = "usage",
    batch_delay_ms: Annotated[
        int, typer.Option(min=0, help="How long a message batch or Batch API batch takes.")
    ] = 0,
    batch_expiry_ms: Annotated[
        int | None, typer.Option(min=1, help="When a message batch expires (never unset).")
    ] = None,
) -> None:
    """Serve a mock of POST /v1/responses, /v1/chat/completions and Anthropic's
    /v1/messages (streaming too) and /v1/messages/batches.

    Limits are answered with real 429s with retry-after and rate-limit headers.
    A prompt containing a fault marker in square brackets scripts a failure:
    fault:500, fault:timeout, fault:400, fault:insufficient_quota, or fault:503:first=2
    (the first two calls fail); a stream breaks with fault:stream_error,
    fault:malformed_chunk, fault:cut_off or fault:no_terminal; fault:404:body=text sends
    an error body not in the API's shape (also body=detail, body=empty); OpenAI's batches too.
    """
    # Imported here: the SDK and the web stack cost every other command ~0.5 s to load.
    from backroom.llm.mock.charge import ChargeAt  # noqa: PLC0415
    from backroom.llm.mock.server import MockConfig, serve_mock  # noqa: PLC0415

    config = MockConfig(
        latency_ms=latency_ms,
        requests_per_minute=rpm,
        tokens_per_minute=tpm,
        stream_interval_ms=stream_interval_ms,
        charge_at=ChargeAt(charge_at),
        batch_delay_ms=batch_delay_ms,
        batch_expiry_ms=batch_expiry_ms,
    )
    print(f"mock LLM on http://{host}:{port}/v1 (OPENAI_BASE_URL)", flush=True)
    serve_mock(config, host, port)
