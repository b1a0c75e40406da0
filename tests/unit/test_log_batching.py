"""Log lines written on the event loop go out together at the loop's next pass."""

from __future__ import annotations

import asyncio
import io
import logging
import sys

import pytest

from backroom.cli.logs import configure_logging


def test_lines_of_one_pass_are_written_at_the_next_and_warnings_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    configure_logging("info", json_lines=False)
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    log = logging.getLogger("backroom.batching")

    async def main() -> tuple[str, str, str]:
        log.info("first")
        log.info("second")
        before = err.getvalue()
        await asyncio.sleep(0)
        after_pass = err.getvalue()
        log.info("third")
        log.warning("fourth")  # writes what is pending too
        return before, after_pass, err.getvalue()

    before, after_pass, at_warning = asyncio.run(main())
    assert before == ""
    assert after_pass.count("\n") == 2 and "second" in after_pass
    assert at_warning.splitlines()[-2:][0].endswith("third")
    assert at_warning.splitlines()[-1].endswith("fourth")


def test_a_line_off_the_loop_is_written_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    configure_logging("info", json_lines=False)
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    logging.getLogger("backroom.batching").info("now")
    assert err.getvalue().rstrip().endswith("now")
