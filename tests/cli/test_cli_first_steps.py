"""What a new user meets first: the version, and a README that matches what serve prints."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

from typer.testing import CliRunner

from backroom.api.server import print_welcome
from backroom.app import App
from backroom.cli.main import cli

README = Path(__file__).resolve().parents[2] / "README.md"


def test_version_prints_the_installed_version() -> None:
    result = CliRunner().invoke(cli, ["--version"])

    assert result.exit_code == 0
    assert result.output == f"backroom {version('backroom')}\n"


def test_the_readme_curl_uses_the_variable_serve_exports() -> None:
    lines: list[str] = []
    print_welcome(App(), "http://127.0.0.1:8000", "br_key", lines.append)
    exported = re.search(r"export (\w+)=br_key", "\n".join(lines))
    assert exported is not None

    readme = README.read_text()
    used = set(re.findall(r"Authorization: Bearer \$(\w+)", readme))
    assert used == {exported.group(1)}
