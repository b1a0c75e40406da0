"""`tenants create` refuses an existing name; `tenants keys create` adds a key to one."""

from __future__ import annotations

import asyncio
from pathlib import Path

from typer.testing import CliRunner

from backroom import App
from backroom.api.server import print_welcome
from backroom.cli.main import cli
from backroom.service.api_keys import hash_api_key


async def _tenant_of(db: str, key: str) -> tuple[str, int | None] | None:
    async with App(db) as app:
        holder = await app.store.tenant_for_key(hash_api_key(key))
        return None if holder is None else (holder.tenant.name, holder.tenant.max_queued)


def test_create_refuses_an_existing_tenant_and_keys_create_adds_a_key(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'tenants.db'}"
    runner = CliRunner()

    first = runner.invoke(cli, ["tenants", "create", "acme", "--max-queued", "5", "--db", db])
    again = runner.invoke(cli, ["tenants", "create", "acme", "--db", db])
    added = runner.invoke(cli, ["tenants", "keys", "create", "acme", "--db", db])
    unknown = runner.invoke(cli, ["tenants", "keys", "create", "nobody", "--db", db])

    assert first.exit_code == 0, first.output
    assert again.exit_code == 1
    assert "tenants keys create acme" in str(again.exception)
    assert added.exit_code == 0, added.output
    first_key, second_key = first.output.split()[-1], added.output.split()[-1]
    assert first_key != second_key
    # Both keys work, and the refused create left the cap of 5 alone.
    assert asyncio.run(_tenant_of(db, first_key)) == ("acme", 5)
    assert asyncio.run(_tenant_of(db, second_key)) == ("acme", 5)
    assert unknown.exit_code == 1
    assert "no tenant is named 'nobody'" in str(unknown.exception)


def test_a_restart_says_how_to_replace_a_lost_default_key() -> None:
    lines: list[str] = []

    print_welcome(App(), "http://127.0.0.1:8000", None, lines.append)

    assert any("backroom tenants keys create default" in line for line in lines)
