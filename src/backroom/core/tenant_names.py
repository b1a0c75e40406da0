"""Tenant names: one documented pattern, and names no tenant may take.

A name is 1-63 characters of lower-case ASCII letters, digits, `_` and `-`, starting
with a letter or digit: safe in a URL, a log line, a metric label and a shell. A few
names are reserved because a person would read them as something else (`admin`).
The admin identity (jobs submitted with the settings' admin key) is `ADMIN_IDENTITY`,
which the pattern excludes, so no tenant can share its namespace.
"""

from __future__ import annotations

import re

from backroom.core.errors import InvalidTenantName

TENANT_NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,62}$"
"""What a tenant name looks like."""

RESERVED_TENANT_NAMES = frozenset({"admin", "administrator", "backroom", "superuser", "system"})
"""Names no tenant may take."""

ADMIN_IDENTITY = "@admin"
"""The tenant of jobs submitted with the admin key: outside the pattern on purpose."""

_NAME = re.compile(TENANT_NAME_PATTERN)


def check_tenant_name(name: str) -> str:
    """`name`, if a tenant may be called that; else `InvalidTenantName` saying why."""
    if not _NAME.fullmatch(name):
        raise InvalidTenantName(
            f"tenant name {name!r} must be 1-63 lower-case letters, digits, '_' or '-', "
            "starting with a letter or digit"
        )
    if name in RESERVED_TENANT_NAMES:
        raise InvalidTenantName(f"tenant name {name!r} is reserved")
    return name
