"""The marker rules of tests/conftest.py hold: they are run on a small planted suite."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"


@pytest.fixture
def planted(pytester: pytest.Pytester) -> pytest.Pytester:
    """A directory with the project's conftest.py and its markers."""
    pytester.makeconftest(CONFTEST.read_text(encoding="utf-8"))
    pytester.makeini(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\n"
        "markers =\n    postgres: on PostgreSQL\n    slow: starts processes\n"
    )
    return pytester


def test_a_test_on_postgresql_without_the_marker_stops_the_run(planted: pytest.Pytester) -> None:
    planted.makepyfile(
        test_planted="""
        import pytest

        def test_unmarked(postgres_url):
            pass

        @pytest.mark.postgres
        def test_marked(postgres_url):
            pass
        """
    )
    result = planted.runpytest("--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*without the postgres marker*", "*test_unmarked*"])
    assert "test_marked" not in result.stderr.str()


@pytest.mark.postgres  # the planted test creates the session's database
def test_a_fixture_that_asks_for_postgresql_at_run_time_needs_the_marker_too(
    planted: pytest.Pytester,
) -> None:
    planted.makepyfile(
        test_planted="""
        import pytest

        @pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
        def marked_url(request):
            if request.param == "sqlite":
                return "sqlite://"
            return request.getfixturevalue("postgres_url")

        @pytest.fixture
        def unmarked_url(request):
            return request.getfixturevalue("postgres_url")

        def test_marked(marked_url):
            pass

        def test_unmarked(unmarked_url):
            pass
        """
    )
    result = planted.runpytest("-v")
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(
        ["*ERROR at teardown of test_unmarked*", "*mark it @pytest.mark.postgres*"]
    )


@pytest.mark.slow  # the planted slow test starts a real process
def test_a_test_that_starts_a_process_without_the_slow_marker_fails(
    planted: pytest.Pytester,
) -> None:
    planted.makepyfile(
        test_planted="""
        import subprocess, sys
        import pytest

        def test_unmarked():
            subprocess.run([sys.executable, "-c", "pass"], check=True)

        @pytest.mark.slow
        def test_marked():
            subprocess.run([sys.executable, "-c", "pass"], check=True)
        """
    )
    result = planted.runpytest("-v")
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(["*test_unmarked FAILED*", "*test_marked PASSED*"])
    result.stdout.fnmatch_lines(["*this test starts a process: mark it @pytest.mark.slow*"])
