"""The example unit test in docs/testing.md passes as printed, run by pytest as a user would."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

TESTING_DOC = Path(__file__).resolve().parents[2] / "docs" / "testing.md"


@pytest.mark.slow
def test_the_memory_store_example_test_passes(tmp_path: Path) -> None:
    match = re.search(r"```python\n(.*?)```", TESTING_DOC.read_text(), re.DOTALL)
    assert match is not None
    (tmp_path / "test_charge.py").write_text(match.group(1))

    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_charge.py"],
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
        check=False,
    )

    output = done.stdout.decode()
    assert done.returncode == 0, output
    assert "1 passed" in output
    # Nothing was written to disk: the store lived in the test's memory.
    written = {path.name for path in tmp_path.iterdir()} - {"__pycache__"}
    assert written == {"test_charge.py"}
