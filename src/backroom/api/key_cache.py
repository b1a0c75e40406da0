"""A short-lived memory of which tenant a key belongs to.

Looking a key up costs a trip to the store, which on SQLite waits its turn behind
commits; remembering the answer for a moment spares almost every request that trip.
The price is written down: a revoked key keeps working in a running server for at
most `ttl_ms` after its revocation, however often it is used, because an entry's
time starts when the store answered and a hit never renews it. Unknown keys are
never remembered, so made-up keys cannot fill it.
"""

from __future__ import annotations

from backroom.clock import Clock
from backroom.service.api_keys import KeyHolder


class TenantCache:
    """Tenants (with the key's role) of recently used keys (by hash), each remembered
    for `ttl_ms`."""

    def __init__(self, clock: Clock, ttl_ms: int, capacity: int = 10_000) -> None:
        self._clock = clock
        self._ttl_ms = ttl_ms
        self._capacity = capacity
        self._entries: dict[str, tuple[KeyHolder, int]] = {}

    def get(self, key_hash: str) -> KeyHolder | None:
        """The remembered tenant of the key, or None if unknown or expired."""
        entry = self._entries.get(key_hash)
        if entry is None:
            return None
        tenant, expires_at = entry
        if self._clock.now() >= expires_at:
            del self._entries[key_hash]
            return None
        return tenant

    def put(self, key_hash: str, tenant: KeyHolder) -> None:
        """Remember the key's tenant (forgetting the oldest entry when full)."""
        if self._ttl_ms <= 0:
            return
        if len(self._entries) >= self._capacity:
            del self._entries[next(iter(self._entries))]
        self._entries[key_hash] = (tenant, self._clock.now() + self._ttl_ms)
