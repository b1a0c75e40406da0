"""The console the CLI's commands print with (rich markup, tables), and their JSON printer.

Apart from `backroom.cli.options` since `backroom worker` prints nothing with it: rich
would cost each worker process ~25 ms of CPU at start-up.
"""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console

out = Console()
"""Where commands print (rich markup, tables, JSON)."""


def print_json(value: Any) -> None:
    """Print `value` as indented JSON."""
    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode()
    except UnicodeEncodeError:
        # A row an older version stored may hold a lone surrogate, which no terminal
        # can print: show it escaped (`\ud800`) rather than fail to show the job.
        out.print_json(text, ensure_ascii=True)
        return
    out.print_json(text)
