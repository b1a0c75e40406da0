"""The `[batch]` table: which jobs are offloaded, and the timings, read from TOML."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from backroom.core.errors import ConfigError
from backroom.llm.batch.config import BatchMode, BatchSettings, batch_settings
from backroom.llm.batch.pricing import batch_prices
from backroom.llm.config import load_llm_config
from backroom.llm.pricing import Prices


def test_the_table_sets_modes_per_lane_and_timings_in_seconds(tmp_path: Path) -> None:
    path = tmp_path / "llm.toml"
    path.write_text(
        '[providers.openai]\n[batch]\ndefault = "always"\n'
        'lanes = { "openai/gpt-4o" = "never" }\nflush_jobs = 500\nflush_after_s = 2.5\n'
    )
    settings = batch_settings(load_llm_config(path, {}).batch)
    assert settings.mode("openai/gpt-4o") is BatchMode.NEVER
    assert settings.mode("openai/other") is BatchMode.ALWAYS
    assert (settings.flush_jobs, settings.flush_after_ms) == (500, 2_500)
    assert batch_settings({}) == BatchSettings()


@pytest.mark.parametrize(
    ("table", "named"),
    [({"default": "sometimes"}, "batch.default"), ({"flush_jobs": 0}, "batch.flush_jobs")],
)
def test_a_bad_table_is_refused_naming_the_key(table: dict[str, object], named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        batch_settings(table)


def test_only_the_interactive_queue_is_never_offloaded() -> None:
    always = BatchSettings(default=BatchMode.ALWAYS)
    assert always.offloads("a/b", "default", asked=False)
    assert not always.offloads("a/b", "interactive", asked=True)
    assert BatchSettings().offloads("a/b", "default", asked=True)
    assert not BatchSettings().offloads("a/b", "batch", asked=False)


def test_a_batch_line_costs_half_the_online_price() -> None:
    online = Prices(Decimal("2.50"), Decimal("1.25"), Decimal("10"))
    batch = batch_prices(online)
    assert batch is not None
    prices = (batch.input_usd_per_million, batch.cached_input_usd_per_million)
    assert (*prices, batch.output_usd_per_million) == (Decimal("1.25"), Decimal(".625"), Decimal(5))
    assert batch_prices(None) is None
