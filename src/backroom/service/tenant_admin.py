"""Changing a tenant after it is made: its caps, and its API keys one by one.

A key is named by its id, a prefix of its stored hash (`KeyInfo.key_id`); the key
itself is never stored, so it can never be listed.
"""

from __future__ import annotations

import enum
import re
from typing import Final

from backroom.core.errors import BackroomError
from backroom.core.usage import DailyBudget
from backroom.service.api_keys import UnknownTenant
from backroom.service.context import AppParts
from backroom.store.protocol import KeyInfo, Tenant

__all__ = ["KEEP", "Keep", "UnknownKey", "list_keys", "revoke_key", "update_tenant"]

# Long enough that a typo seldom names another key, short enough to type.
_MIN_KEY_ID = 4
_KEY_ID = re.compile(rf"[0-9a-f]{{{_MIN_KEY_ID},64}}")


class Keep(enum.Enum):
    """The type of `KEEP`: a setting `update_tenant` leaves as it is."""

    KEEP = "keep"


KEEP: Final = Keep.KEEP


class UnknownKey(BackroomError):
    """A key id names no key of the tenant, more than one, or a key revoked already."""

    def __init__(self, tenant: str, key_id: str, why: str) -> None:
        super().__init__(
            f"tenant {tenant!r}: {why} {key_id!r} (`backroom tenants keys list {tenant}` "
            "shows its key ids)"
        )
        self.tenant = tenant
        self.key_id = key_id


async def _known(app: AppParts, name: str) -> Tenant:
    """The tenant called `name`, or `UnknownTenant`."""
    tenant = await app.store.get_tenant(name)
    if tenant is None:
        raise UnknownTenant(name)
    return tenant


async def update_tenant(
    app: AppParts,
    name: str,
    *,
    max_queued: int | Keep | None = KEEP,
    daily_budget: DailyBudget | Keep | None = KEEP,
    max_job_cost_pico_usd: int | Keep | None = KEEP,
) -> Tenant:
    """Change only the given caps of tenant `name` (None: no cap); `UnknownTenant`."""
    tenant = await _known(app, name)
    updated = await app.store.update_tenant(
        name,
        tenant.max_queued if isinstance(max_queued, Keep) else max_queued,
        tenant.daily_budget if isinstance(daily_budget, Keep) else daily_budget,
        tenant.max_job_cost_pico_usd
        if isinstance(max_job_cost_pico_usd, Keep)
        else max_job_cost_pico_usd,
    )
    if updated is None:  # removed between the two calls
        raise UnknownTenant(name)
    return updated


async def list_keys(app: AppParts, name: str) -> list[KeyInfo]:
    """Every key of tenant `name`, revoked or not, oldest first; `UnknownTenant`."""
    await _known(app, name)
    return await app.store.list_keys(name)


async def revoke_key(app: AppParts, name: str, key_id: str) -> KeyInfo:
    """Revoke the one key of tenant `name` its id names; the key as it was.

    Raises `UnknownTenant`, or `UnknownKey` when the id names none of the tenant's
    keys, more than one, or one revoked already (nothing changes then).
    """
    wanted = key_id.strip().lower()
    if _KEY_ID.fullmatch(wanted) is None:
        raise UnknownKey(name, key_id, f"a key id is {_MIN_KEY_ID} or more hex digits, not")
    matches = [key for key in await list_keys(app, name) if key.key_hash.startswith(wanted)]
    if not matches:
        raise UnknownKey(name, key_id, "no key has the id")
    if len(matches) > 1:
        raise UnknownKey(name, key_id, "more than one key starts with")
    if matches[0].revoked_at is not None or not await app.store.revoke_key(
        name, wanted, app.clock.now()
    ):
        raise UnknownKey(name, key_id, "already revoked: key")
    return matches[0]
