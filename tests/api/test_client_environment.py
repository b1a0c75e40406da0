"""The client takes its key from BACKROOM_API_KEY, and its errors from `backroom`."""

from __future__ import annotations

import httpx
import pytest

import backroom
from backroom import Client, ConfigError
from backroom.client import errors


def test_a_client_without_a_key_sends_backroom_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers["Authorization"])
        return httpx.Response(404, json={"status": 404, "title": "Not Found", "detail": "x"})

    monkeypatch.setenv("BACKROOM_API_KEY", "br_from-the-environment")
    transport = httpx.MockTransport(answer)
    with Client("http://test", transport=transport) as client, pytest.raises(backroom.NotFound):
        client.get(1)

    assert seen == ["Bearer br_from-the-environment"]


def test_no_key_anywhere_is_a_readable_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BACKROOM_API_KEY", raising=False)

    with pytest.raises(ConfigError, match="BACKROOM_API_KEY"):
        Client("http://test")


def test_the_client_errors_are_importable_from_backroom() -> None:
    for name in ("ApiError", "Unauthorized", "NotFound", "Conflict", "InvalidRequest"):
        assert getattr(backroom, name) is getattr(errors, name)
        assert name in backroom.__all__
