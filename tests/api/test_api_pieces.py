"""The small pieces under the API: Idempotency-Key parsing, API keys, the key cache."""

from __future__ import annotations

import pytest
from api_support import ManualClock

from backroom.api.headers import InvalidIdempotencyKey, parse_idempotency_key
from backroom.api.key_cache import TenantCache
from backroom.service.api_keys import generate_api_key, hash_api_key
from backroom.store.protocol import Tenant
from backroom.store.records import KeyHolder


@pytest.mark.parametrize(
    ("header", "key"),
    [
        ("abc", "abc"),
        ("with space", "with space"),
        ('"abc"', "abc"),
        ('"a \\"quoted\\" \\\\ key"', 'a "quoted" \\ key'),
        ("x" * 255, "x" * 255),
        ('"' + "y" * 255 + '"', "y" * 255),
        ('a"b', 'a"b'),
    ],
)
def test_valid_keys_bare_or_quoted(header: str, key: str) -> None:
    assert parse_idempotency_key(header) == key


@pytest.mark.parametrize(
    "header",
    ["", '""', "x" * 256, "caf\u00e9", "nul\x00", '"open', '"esc\\aped"', '"a"b"', '"end\\"'],
)
def test_invalid_keys(header: str) -> None:
    with pytest.raises(InvalidIdempotencyKey):
        parse_idempotency_key(header)


def test_api_keys_are_random_prefixed_and_stored_as_sha256() -> None:
    first, second = generate_api_key(), generate_api_key()

    assert first.startswith("br_")
    assert len(first) == 46
    assert first != second
    assert hash_api_key(first) == hash_api_key(first)
    assert len(hash_api_key(first)) == 64
    assert first not in hash_api_key(first)


def test_the_tenant_cache_forgets_after_its_ttl_and_when_full() -> None:
    clock = ManualClock()
    cache = TenantCache(clock, ttl_ms=1000, capacity=2)
    acme, globex, initech = (
        KeyHolder(Tenant(name, created_at=0)) for name in ("acme", "globex", "initech")
    )

    cache.put("a", acme)
    clock.ms = 999
    remembered = cache.get("a")
    clock.ms = 1000
    expired = cache.get("a")
    cache.put("a", acme)
    cache.put("b", globex)
    cache.put("c", initech)

    assert (remembered, expired) == (acme, None)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (None, globex, initech)


def test_a_cache_without_ttl_remembers_nothing() -> None:
    cache = TenantCache(ManualClock(), ttl_ms=0)

    cache.put("a", KeyHolder(Tenant("acme", created_at=0)))

    assert cache.get("a") is None
