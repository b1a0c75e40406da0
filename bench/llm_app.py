"""The app the LLM benchmark's worker processes run: `llm.respond`, nothing else.

Its providers come from the TOML file that `BACKROOM_CONFIG` names (and the usual
`OPENAI_*` variables), read once at import, as `backroom worker --app` loads it.
"""

from __future__ import annotations

import os
from pathlib import Path

from backroom import App
from backroom.config import Settings
from backroom.llm.config import load_llm_config
from backroom.llm.task import register_llm_tasks

CALL_TIMEOUT_S = 120
"""Below the workers' lease, so a hung call ends before its lease does."""

app = App()
_config_path = Settings.from_env().config_path
respond = register_llm_tasks(
    app,
    load_llm_config(None if _config_path is None else Path(_config_path), os.environ),
    call_timeout_s=CALL_TIMEOUT_S,
)
