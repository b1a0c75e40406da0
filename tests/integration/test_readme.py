"""The README's library example runs as printed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.mark.slow
def test_the_ten_line_example_runs(tmp_path: Path) -> None:
    section = README.read_text().split("## The library in ten lines", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None
    script = tmp_path / "example.py"
    script.write_text(match.group(1))

    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, timeout=60, check=True
    )

    assert done.stdout.decode() == "...\n"
    assert (tmp_path / "backroom.db").exists()
