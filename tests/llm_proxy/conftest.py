"""Fixtures of the tests behind LiteLLM's proxy, a third-party OpenAI-compatible server.

`litellm_proxy` (one per session) serves the models named in proxy_models.py: some that
LiteLLM answers itself (some limited to 3 requests a minute by LiteLLM), and some that it
forwards to `backroom mock-llm` processes (one limited to 2 requests a minute by the mock).
When a selected test needs it, its processes start as soon as the tests are collected,
so it boots while the tests before it run; the first test to use it waits for it.
A test that needs another model adds it to proxy_models.py, under a name of its own.

`litellm_proxy_factory(models, mocks=..., ...)` starts another proxy with the
models a test needs (see `litellm_process.mocked_model` / `upstream_model`); it is
stopped when the test ends. A proxy takes ~10-40 s to start: use it only for what the
session's proxy cannot be (other LiteLLM settings, a proxy the test stops).

LiteLLM is installed from the package index into build/litellm-venv once per pin change
(tests/llm_proxy/requirements.txt), by `make test-deps` or else before the first test
runs, so the install does not count against any test's timeout. Every test here starts
processes: mark it `slow`.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from litellm_install import ensure_litellm
from litellm_process import LiteLLMProxy, ProxyFactory, running_litellm, started_litellm
from proxy_models import session_mocks, session_models

PROXY_FIXTURES = {"litellm_proxy", "litellm_proxy_factory"}
# The first test to ask for a proxy waits for it to start: up to minutes under load.
PROXY_TEST_TIMEOUT_S = 300
SESSION_PROXY = "litellm_proxy"
_SESSION_STARTED = pytest.StashKey[tuple[ExitStack, Callable[[], LiteLLMProxy]]]()


def _needs_proxy(item: pytest.Item) -> bool:
    return bool(PROXY_FIXTURES & set(getattr(item, "fixturenames", ())))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Give the tests that start a proxy the time to start it (unless they set theirs)."""
    for item in items:
        if _needs_proxy(item) and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(PROXY_TEST_TIMEOUT_S))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Install LiteLLM before any test runs, when a selected test needs it; start the
    session's proxy then too, when one needs that."""
    if not any(_needs_proxy(item) for item in session.items):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")

    def report(line: str) -> None:
        if reporter is not None:
            reporter.write_line(line)

    ensure_litellm(report)
    if any(SESSION_PROXY in getattr(item, "fixturenames", ()) for item in session.items):
        session.config.stash[_SESSION_STARTED] = _start_session_proxy()


def _start_session_proxy() -> tuple[ExitStack, Callable[[], LiteLLMProxy]]:
    stack = ExitStack()
    folder = Path(tempfile.mkdtemp(prefix="backroom-litellm-"))
    stack.callback(shutil.rmtree, folder, ignore_errors=True)  # after the processes stop
    ready = stack.enter_context(started_litellm(folder, session_models(), mocks=session_mocks()))
    return stack, ready


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Stop the session's proxy."""
    started = session.config.stash.get(_SESSION_STARTED, None)
    if started is not None:
        del session.config.stash[_SESSION_STARTED]
        started[0].close()


@pytest.fixture(scope="session")
def litellm_proxy(request: pytest.FixtureRequest) -> LiteLLMProxy:
    """LiteLLM's proxy with the models of proxy_models.py (see its docstring)."""
    config = request.config
    if _SESSION_STARTED not in config.stash:  # asked for by `getfixturevalue` only
        config.stash[_SESSION_STARTED] = _start_session_proxy()
    return config.stash[_SESSION_STARTED][1]()


@pytest.fixture
def litellm_proxy_factory(tmp_path: Path) -> Iterator[ProxyFactory]:
    """Starts proxies with other models: `factory(models, mocks={...}, ...)` takes
    `running_litellm`'s arguments; each proxy is stopped when the test ends."""
    numbers = itertools.count()
    with ExitStack() as stack:

        def start(models: Sequence[Mapping[str, Any]], **options: Any) -> LiteLLMProxy:
            folder = tmp_path / f"litellm-{next(numbers)}"
            return stack.enter_context(running_litellm(folder, models, **options))

        yield start
