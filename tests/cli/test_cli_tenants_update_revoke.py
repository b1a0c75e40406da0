"""`tenants update` changes only the given settings; `tenants keys list|revoke` name keys by id."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from backroom import App
from backroom.cli.main import cli
from backroom.core.usage import DailyBudget
from backroom.service.api_keys import hash_api_key
from backroom.store.protocol import Tenant


def _run(db: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["tenants", *args, "--db", db])


async def _tenant(db: str, name: str) -> Tenant | None:
    async with App(db) as app:
        return await app.store.get_tenant(name)


async def _key_works(db: str, key: str) -> bool:
    async with App(db) as app:
        return await app.store.tenant_for_key(hash_api_key(key)) is not None


def _revoked_cell(table: str, key_id: str) -> str:
    """The "revoked" column of the key's row in a `keys list` table."""
    (row,) = [line for line in table.splitlines() if key_id in line]
    return row.split("│")[3].strip()


def test_update_changes_only_the_given_settings(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'tenants.db'}"
    created = _run(db, "create", "acme", "--max-queued", "5", "--daily-budget-usd", "3")
    key = created.output.split()[-1]

    cap = _run(db, "update", "acme", "--max-queued", "9")
    after_cap = asyncio.run(_tenant(db, "acme"))
    budget = _run(db, "update", "acme", "--no-max-queued", "--daily-budget", "1.5")
    after_budget = asyncio.run(_tenant(db, "acme"))
    cleared = _run(db, "update", "acme", "--no-daily-budget")

    assert cap.exit_code == 0, cap.output
    assert after_cap is not None and after_cap.max_queued == 9
    assert after_cap.daily_budget == DailyBudget.of_usd(Decimal("3"))
    assert budget.exit_code == 0, budget.output
    assert "max queued none, daily budget USD 1.5" in budget.output
    assert after_budget is not None and after_budget.max_queued is None
    assert after_budget.daily_budget == DailyBudget.of_usd(Decimal("1.5"))
    assert cleared.exit_code == 0, cleared.output
    final = asyncio.run(_tenant(db, "acme"))
    assert final is not None and (final.max_queued, final.daily_budget) == (None, None)
    assert asyncio.run(_key_works(db, key))


def test_update_refuses_unknown_tenants_and_contradictions(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'tenants.db'}"
    _run(db, "create", "acme", "--max-queued", "5")

    unknown = _run(db, "update", "nobody", "--max-queued", "2")
    both = _run(db, "update", "acme", "--max-queued", "2", "--no-max-queued")
    nothing = _run(db, "update", "acme")
    bad_budget = _run(db, "update", "acme", "--daily-budget", "lots")

    assert unknown.exit_code == 1
    assert "no tenant is named 'nobody'" in str(unknown.exception)
    assert both.exit_code == 1
    assert "contradict" in str(both.exception)
    assert nothing.exit_code == 1
    assert "nothing to change" in str(nothing.exception)
    assert bad_budget.exit_code == 1
    tenant = asyncio.run(_tenant(db, "acme"))
    assert tenant is not None and tenant.max_queued == 5


def test_keys_are_listed_by_id_and_revoked_one_at_a_time(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'tenants.db'}"
    first = _run(db, "create", "acme")
    second = _run(db, "keys", "create", "acme")
    _run(db, "create", "other")
    first_key, second_key = first.output.split()[-1], second.output.split()[-1]
    first_id = hash_api_key(first_key)[:12]

    listed = _run(db, "keys", "list", "acme")
    revoked = _run(db, "keys", "revoke", "acme", first_id)
    again = _run(db, "keys", "revoke", "acme", first_id)
    listed_after = _run(db, "keys", "list", "acme")

    assert f"id {first_id}" in first.output
    assert f"id {hash_api_key(second_key)[:12]}" in second.output
    assert first_id in listed.output and hash_api_key(second_key)[:12] in listed.output
    assert first_key not in listed.output and second_key not in listed.output
    assert revoked.exit_code == 0, revoked.output
    assert f"revoked key {first_id}" in revoked.output
    assert again.exit_code == 1
    assert "already revoked" in str(again.exception)
    assert _revoked_cell(listed.output, first_id) == "-"
    assert _revoked_cell(listed_after.output, first_id).endswith("+00:00")
    assert _revoked_cell(listed_after.output, hash_api_key(second_key)[:12]) == "-"
    assert not asyncio.run(_key_works(db, first_key))
    assert asyncio.run(_key_works(db, second_key))


@pytest.mark.slow
def test_revoking_an_unknown_or_foreign_key_is_one_readable_line(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'tenants.db'}"
    other = _run(db, "create", "other")
    _run(db, "create", "acme")
    other_id = hash_api_key(other.output.split()[-1])[:12]
    env = {**os.environ, "BACKROOM_DATABASE_URL": db}

    def revoke(key_id: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "backroom", "tenants", "keys", "revoke", "acme", key_id]
        return subprocess.run(command, capture_output=True, text=True, env=env, check=False)

    foreign, unknown, malformed = revoke(other_id), revoke("0" * 12), revoke("zz")

    for result in (foreign, unknown, malformed):
        assert result.returncode == 1
        assert result.stderr.startswith("backroom: error: tenant 'acme': ")
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "no key has the id" in foreign.stderr
    assert asyncio.run(_key_works(db, other.output.split()[-1]))
