"""`backroom tenants create --daily-budget-usd`: an exact budget, listed with the tenant."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from typer.testing import CliRunner

from backroom import App
from backroom.cli.main import cli
from backroom.core.usage import DailyBudget


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    for name in ("BACKROOM_URL", "BACKROOM_API_KEY", "BACKROOM_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return f"sqlite:///{tmp_path / 'cli.db'}"


def stored_budget(db: str, name: str) -> DailyBudget | None:
    async def read() -> DailyBudget | None:
        async with App(db) as app:
            tenant = await app.store.get_tenant(name)
        assert tenant is not None
        return tenant.daily_budget

    return asyncio.run(read())


def test_a_daily_budget_is_stored_exactly_and_listed(db: str) -> None:
    runner = CliRunner()
    created = runner.invoke(
        cli, ["tenants", "create", "acme", "--daily-budget-usd", "2.10", "--db", db]
    )
    listed = runner.invoke(cli, ["tenants", "list", "--db", db])

    assert created.exit_code == 0, created.output
    assert stored_budget(db, "acme") == DailyBudget(2_100_000_000_000)
    assert "2.1" in listed.output


@pytest.mark.parametrize("amount", ["lots", "-1", "NaN"])
def test_a_budget_that_is_no_amount_of_dollars_is_refused(db: str, amount: str) -> None:
    result = CliRunner().invoke(
        cli, ["tenants", "create", "acme", "--daily-budget-usd", amount, "--db", db]
    )

    assert result.exit_code != 0
    assert "--daily-budget-usd" in str(result.exception)
