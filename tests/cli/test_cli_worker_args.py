"""`backroom worker`'s ordinary command lines read without typer give what typer gives."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from typer.testing import CliRunner

import backroom.cli.worker as worker_command
from backroom.cli.root import new_cli
from backroom.cli.worker_args import FLAGS, REPEATABLE, VALUES, quick_options
from backroom.cli.worker_run import WorkerOptions

ORDINARY = [
    [],
    ["--app", "bench.noop_app:app", "--db", "postgresql://u@h:5432/d", "--burst"],
    ["--app=m:app", "--no-burst", "--builtin-tasks", "--log-json", "--log-level", "DEBUG"],
    ["--concurrency", "100", "--claim-batch", "1", "--lease", "0.01", "--over-budget", "fail"],
    ["--queues", "a,b", "--queues", "c", "--config", "llm.toml", "--listen-url", "postgresql://l"],
    ["--pool-min", "0", "--pool-max", "1", "--poll-interval", "0.001", "--watch-interval", "0"],
    ["--metrics-port", "65535", "--metrics-host", "0.0.0.0", "--lease", "12.50"],
    ["--poll-interval=2", "--watch-interval=0.25", "--metrics-port", "0", "--log-level=warning"],
]
LEFT_TO_TYPER = [
    ["--help"],
    ["--concurrency", "0"],
    ["--concurrency", "1.5"],
    ["--concurrency", "007"],
    ["--lease", "1e3"],
    ["--lease", "0.001"],
    ["--metrics-port", "65536"],
    ["--pool-max", "0"],
    ["--over-budget", "WAIT"],
    ["--log-level", "loud"],
    ["--app", "a:app", "--app", "b:app"],
    ["--app"],
    ["--app", ""],
    ["--app", "--db"],
    ["--burst=yes"],
    ["--version"],
    ["--bogus"],
    ["positional"],
    ["--", "--burst"],
]


def _typer_reads(args: list[str], monkeypatch: pytest.MonkeyPatch) -> WorkerOptions:
    seen: list[WorkerOptions] = []
    monkeypatch.setattr(worker_command, "run_worker", seen.append)
    cli = new_cli()
    cli.command()(worker_command.worker)
    result = CliRunner().invoke(cli, ["worker", *args])
    assert result.exit_code == 0, result.output
    return seen[0]


@pytest.mark.parametrize("args", ORDINARY)
def test_an_ordinary_command_line_reads_as_typer_reads_it(
    args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert quick_options(args) == _typer_reads(args, monkeypatch)


@pytest.mark.parametrize("args", LEFT_TO_TYPER)
def test_any_other_is_left_to_typer(args: list[str]) -> None:
    assert quick_options(args) is None


def test_every_option_of_the_command_is_read_and_has_its_default() -> None:
    parameters = inspect.signature(worker_command.worker).parameters
    options = WorkerOptions()
    assert {name: getattr(options, name) for name in parameters} == {
        name: parameter.default for name, parameter in parameters.items()
    }
    read = {field for field, _ in VALUES.values()} | {field for field, _ in FLAGS.values()}
    assert read == set(parameters)
    assert read >= REPEATABLE


def test_the_flags_are_the_commands_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    for flag, (field, value) in FLAGS.items():
        assert getattr(_typer_reads([flag], monkeypatch), field) is value
    assert _typer_reads(["--config", "x.toml"], monkeypatch).llm_config == Path("x.toml")
