"""What `backroom` loads at start-up: every worker process pays it before its first job."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from typer.testing import CliRunner

from backroom.cli.main import cli
from backroom.cli.mock_llm import CHARGE_AT
from backroom.cli.root import new_cli
from backroom.cli.worker import worker
from backroom.llm.mock.charge import ChargeAt
from backroom.version import __version__


def test_the_version_a_worker_prints_is_the_installed_one() -> None:
    # A worker reads it from `backroom.version` rather than the installed metadata.
    assert __version__ == version("backroom")


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


def test_the_worker_alone_is_the_whole_clis_worker() -> None:
    # `backroom worker` builds a CLI of its own command only (`backroom.cli.launch`).
    alone = new_cli()
    alone.command()(worker)
    runner = CliRunner()
    for args in (["worker", "--help"], ["worker", "--concurrency", "0"], ["--version"]):
        whole, own = runner.invoke(cli, args), runner.invoke(alone, args)
        assert (own.exit_code, own.output) == (whole.exit_code, whole.output)


WORKER_PROBE = """
import sys
sys.argv = ["backroom", "worker", "--app", "probe_app:app", "--burst"]
from backroom.cli import main
try:
    main()
finally:
    print(" ".join(sorted(sys.modules)))
"""
PROBE_APP = """
from backroom import App

app = App("memory://")


@app.task("noop")
async def noop(ctx, payload):
    return None
"""


@pytest.mark.slow
def test_a_worker_process_loads_no_other_commands_server_or_client(tmp_path: Path) -> None:
    # Every worker process pays for what it imports before its first claim.
    (tmp_path / "probe_app.py").write_text(PROBE_APP)
    loaded = subprocess.run(
        [sys.executable, "-c", WORKER_PROBE],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    # An ordinary command line is read without typer (`backroom.cli.worker_args`), whose
    # options build pydantic validators (~90 ms); the process's counters are tallies that
    # need prometheus_client (and its http.server) only when read; OpenTelemetry's API
    # loads once something may trace.
    unwanted = ("httpx", "rich", "fastapi", "uvicorn", "sqlite3", "typer", "pydantic")
    unwanted_too = ("prometheus_client", "http", "wsgiref", "opentelemetry")
    unwanted_here = ("api", "client", "dashboard", "llm", "cli.main", "cli.jobs", "cli.serve")
    assert "backroom.runtime.worker" in loaded
    # The version comes from `backroom.version`, the worker id's suffix from os.urandom;
    # email.utils waits for a Retry-After date.
    not_loaded = ("importlib.metadata", "uuid", "platform", "importlib.resources", "email")
    assert [name for name in not_loaded if name in loaded] == []
    # Submitting loads its part of the service layer when an app first submits.
    assert "backroom.service.submit" not in loaded
    assert [name for name in loaded if name.split(".")[0] in unwanted + unwanted_too] == []
    assert [
        name
        for name in loaded
        if any(
            name == f"backroom.{part}" or name.startswith(f"backroom.{part}.")
            for part in unwanted_here
        )
    ] == []


@pytest.mark.slow
def test_reading_the_migrations_loads_no_importlib_resources() -> None:
    # Every worker on a database checks them at start; importlib.resources brings
    # tempfile, shutil and zipfile (~10 ms) for packages zipped, which backroom never is.
    probe = (
        "import sys\n"
        "from backroom.store.migrations import load_migrations, shipped_versions\n"
        "assert shipped_versions('postgres') == {m.version for m in load_migrations('postgres')}\n"
        "print(sorted(name for name in sys.modules if name.startswith('importlib.resources')))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == "[]"
