"""The dashboard in a real browser against a real `backroom serve` with its worker.

One scenario, as a person would go: log in, read the overview, filter the jobs, open
the failed one, redrive it by clicking and watch it succeed without reloading; a
read-only key is refused an action; another tenant's job is a 404; the admin sees
every tenant, the server's idle worker on the overview, and changes a tenant's caps.
Each page is saved as a screenshot under build/screenshots/.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from browser_support import SCREENSHOTS, chromium
from playwright.sync_api import Page, expect
from server_process import CLI_STARTER, Server, serve_process

from backroom.clock import SystemClock

# A real server, a worker and a browser: more than the default 120 s on a loaded machine.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(360)]

HERE = Path(__file__).parent
ADMIN_KEY = "br_admin-key-for-the-dashboard-test"
DEADLINE_MS = 20_000


def _cli(db: str, *arguments: str) -> str:
    """Run the backroom CLI on the test's database; its last output word (a new key)."""
    command = [sys.executable, "-c", CLI_STARTER, *arguments, "--db", db]
    done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=60)
    return done.stdout.split()[-1]


def _submit(server: Server, key: str, task: str, payload: object, attempts: int = 1) -> int:
    response = httpx.post(
        f"{server.url}/v1/jobs",
        headers={"Authorization": f"Bearer {key}"},
        json={"task": task, "input": payload, "max_attempts": attempts},
    )
    assert response.status_code == 202, response.text
    return int(response.json()["id"])


def _wait_for_state(server: Server, key: str, job_id: int, state: str) -> None:
    clock = SystemClock()
    deadline = clock.now() + DEADLINE_MS
    while clock.now() < deadline:
        response = httpx.get(
            f"{server.url}/v1/jobs/{job_id}", headers={"Authorization": f"Bearer {key}"}
        )
        if response.json()["status"] == state:
            return
        time.sleep(0.05)  # a real server works: poll it, up to the deadline
    pytest.fail(f"job {job_id} did not become {state}")


def _log_in(page: Page, server: Server, key: str) -> None:
    page.goto(f"{server.url}/dashboard/overview")
    expect(page).to_have_url(re.compile(r"/dashboard/login"))
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name=re.compile("^Overview"))).to_be_visible()


def _shot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def _log_out(page: Page) -> None:
    page.get_by_role("button", name="Log out").click()
    expect(page).to_have_url(re.compile(r"/dashboard/login"))


def _tenant_pages(page: Page, server: Server, tenant_key: str, failing: int, passing: Path) -> None:
    """The tenant's walk: overview, filter, the failed job, redrive it, watch it succeed."""
    _log_in(page, server, tenant_key)
    expect(page.locator("tr[data-queue=interactive]")).to_be_visible()
    _shot(page, "overview")

    page.get_by_role("link", name="Jobs", exact=True).click()
    page.get_by_label("failed").check()
    page.get_by_role("button", name="Filter").click()
    rows = page.locator("table.jobs tbody tr")
    expect(rows).to_have_count(2)  # the one to redrive, and one that fails for ever
    for row in rows.all():
        expect(row).to_contain_text("report.build")
    _shot(page, "jobs")

    page.get_by_role("link", name=str(failing), exact=True).click()
    expect(page.get_by_role("heading", name=re.compile(f"^Job {failing}"))).to_contain_text(
        "failed"
    )
    expect(page.locator(".error").first).to_contain_text("upstream file")
    _shot(page, "job-failed")

    passing.write_text("ready")
    page.get_by_role("button", name="Redrive").click()
    # No reload from here on: the page follows the job's events.
    expect(page.locator("#partial")).to_contain_text("section 2 written", timeout=DEADLINE_MS)
    heading = page.get_by_role("heading", name=re.compile(f"^Job {failing}"))
    expect(heading).to_contain_text("succeeded", timeout=DEADLINE_MS)
    expect(page.locator("#result")).to_contain_text('"sections": 3')
    expect(page.locator("ol.timeline li")).to_have_count(2)
    _shot(page, "job-succeeded")


def test_a_person_watches_steers_and_is_kept_to_their_own_jobs(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'dashboard.db'}"
    path = os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))
    env = {"PYTHONPATH": path, "BACKROOM_ADMIN_KEY": ADMIN_KEY}
    options = ("--db", db, "--app", "dashboard_app:app", "--poll-interval", "100")
    with serve_process(tmp_path, *options, env=env) as server:
        globex_key = _cli(db, "tenants", "create", "globex")
        read_only_key = _cli(db, "tenants", "keys", "create", "default", "--read-only")
        passing = tmp_path / "upstream.txt"
        for _ in range(3):
            _submit(server, server.key, "email.send", {"to": "a@example.com"})
        failing = _submit(server, server.key, "report.build", {"pass_when": str(passing)})
        still_failing = _submit(
            server, server.key, "report.build", {"pass_when": str(tmp_path / "never")}
        )
        theirs = _submit(server, globex_key, "email.send", {"to": "b@example.com"})
        _wait_for_state(server, server.key, still_failing, "failed")
        _wait_for_state(server, server.key, failing, "failed")

        with chromium() as browser:
            page = browser.new_page()
            _tenant_pages(page, server, server.key, failing, passing)

            response = page.goto(f"{server.url}/dashboard/jobs/{theirs}")
            assert response is not None and response.status == 404
            expect(page.get_by_role("heading", name="Not found")).to_be_visible()
            _log_out(page)

            _read_only_is_refused(page, server, read_only_key, still_failing)
            _admin_sees_every_tenant(page, server, theirs)
            _admin_pages(page)
            _pause_and_resume(page, server)


def _read_only_is_refused(page: Page, server: Server, key: str, failed: int) -> None:
    _log_in(page, server, key)
    page.goto(f"{server.url}/dashboard/jobs/{failed}")
    expect(page.get_by_role("heading", name=re.compile(f"^Job {failed}"))).to_be_visible()
    expect(page.get_by_role("button", name="Redrive")).to_have_count(0)
    # The button is not shown; a hand-made post with a valid form token is refused.
    token = page.locator("input[name=csrf]").first.get_attribute("value")
    answer = page.request.post(
        f"{server.url}/dashboard/jobs/{failed}/redrive", form={"csrf": token or ""}
    )
    assert answer.status == 403
    assert "read-only" in answer.text()
    caps = page.request.post(
        f"{server.url}/dashboard/tenants/globex/caps", form={"csrf": token or "", "max_queued": "1"}
    )
    assert caps.status == 403
    page.reload()
    expect(page.get_by_role("heading", name=re.compile(f"^Job {failed}"))).to_contain_text("failed")
    _log_out(page)


def _admin_sees_every_tenant(page: Page, server: Server, theirs: int) -> None:
    _log_in(page, server, ADMIN_KEY)
    page.goto(f"{server.url}/dashboard/jobs?tenant=globex")
    rows = page.locator("table.jobs tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("globex")
    page.goto(f"{server.url}/dashboard/jobs/{theirs}")
    expect(page.get_by_role("heading", name=re.compile(f"^Job {theirs}"))).to_be_visible()
    page.goto(f"{server.url}/dashboard/overview")
    # The server's worker has run every job: it holds none, and shows alive all the same.
    worker = page.locator("table.workers tbody tr").first
    expect(worker).to_contain_text("alive")
    expect(worker).to_contain_text("idle")
    _shot(page, "overview-admin")


def _admin_pages(page: Page) -> None:
    """The admin's dead letters (a group redriven) and tenants (a key made, shown once)."""
    page.get_by_role("link", name="Dead letters").click()
    groups = page.locator("table.groups tbody tr")
    expect(groups).to_have_count(1)
    expect(groups.first).to_contain_text("report.build")
    expect(groups.first).to_contain_text("Permanent")
    _shot(page, "dead-letters")
    groups.first.get_by_role("button", name=re.compile("^Redrive")).click()
    expect(page.locator(".notice")).to_contain_text("1 job(s) of report.build")

    page.get_by_role("link", name="Tenants").click()
    expect(page.get_by_role("heading", name="globex")).to_be_visible()
    globex = page.locator("section.tenant", has=page.get_by_role("heading", name="globex"))
    globex.get_by_label("read-only").check()
    globex.get_by_role("button", name="New key for globex").click()
    expect(page.locator("#new-key")).to_contain_text("br_")
    globex.get_by_label("Active jobs cap").fill("25")
    globex.get_by_label("Daily LLM budget, USD").fill("2.5")
    globex.get_by_role("button", name="Save caps of globex").click()
    expect(page.locator(".notice")).to_contain_text("saved the caps of tenant globex")
    expect(globex.locator("dl.facts")).to_contain_text("$2.5")
    expect(globex.get_by_label("Active jobs cap")).to_have_value("25")
    _shot(page, "tenants")


def _pause_and_resume(page: Page, server: Server) -> None:
    """The admin pauses the interactive queue, a job waits in it, and resuming runs it."""
    page.get_by_role("link", name="Queues").click()
    row = page.locator("tr[data-queue=interactive]")
    row.get_by_role("button", name="Pause").click()
    expect(page.locator("tr[data-queue=interactive]")).to_contain_text("paused since")
    waiting = _submit(server, server.key, "email.send", {"to": "c@example.com"})
    page.reload()
    _shot(page, "queues")
    page.locator("tr[data-queue=interactive]").get_by_role("button", name="Resume").click()
    expect(page.locator("tr[data-queue=interactive]")).to_contain_text("running")
    _wait_for_state(server, server.key, waiting, "succeeded")
