"""The app the LLM process tests run in `backroom worker` processes: `llm.respond` only.

Its providers come from the TOML file `BACKROOM_CONFIG` names; a call times out after
10 s, or the seconds `BACKROOM_TEST_CALL_TIMEOUT_S` gives.
"""

from __future__ import annotations

import os
from pathlib import Path

from backroom import App
from backroom.config import Settings
from backroom.llm.config import load_llm_config
from backroom.llm.task import register_llm_tasks

CALL_TIMEOUT_ENV = "BACKROOM_TEST_CALL_TIMEOUT_S"

app = App()
_config_path = Settings.from_env().config_path
register_llm_tasks(
    app,
    load_llm_config(None if _config_path is None else Path(_config_path), os.environ),
    call_timeout_s=float(os.environ.get(CALL_TIMEOUT_ENV, "10")),
)
