"""Debian's chromium driven by Playwright, for the dashboard's browser tests.

Never `playwright install`: it downloads a browser and fails offline. `.ci/run`
installs Debian's chromium, which Playwright launches from its path with a fresh
profile and every background network feature off.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, sync_playwright

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"


@contextmanager
def chromium() -> Iterator[BrowserContext]:
    """A context of Debian's headless chromium; Playwright starts it on a fresh temporary
    profile (user data directory) and removes that at the end."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: `apt-get install chromium` (.ci/run does)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True, timeout=60_000
        )
        try:
            yield browser.new_context(viewport={"width": 1280, "height": 900})
        finally:
            browser.close()
