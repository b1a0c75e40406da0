"""What `backroom` loads at start-up: every worker process pays it before its first job."""

from __future__ import annotations

import subprocess
import sys

import pytest

from backroom.cli.mock_llm import CHARGE_AT
from backroom.llm.mock.charge import ChargeAt


def test_mock_llm_offers_every_charge_at_choice() -> None:
    assert tuple(choice.value for choice in ChargeAt) == CHARGE_AT


@pytest.mark.slow
def test_the_command_loads_no_llm_sdk() -> None:
    # The SDKs cost ~2 s of CPU to import; only `mock-llm` and LLM apps need them.
    probe = (
        "import sys, backroom.cli.main\n"
        "print(sorted({name.split('.')[0] for name in sys.modules} & {'openai', 'anthropic'}))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == "[]"
