"""`prefixq dashboard` in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver`` packages, installed by scripts/setup.sh) driven by Selenium, while the two
session workers (gpu0, gpu1) process a burst.

rq-dashboard's pages are shells that its JavaScript fills from the JSON endpoints every few
seconds, so every check waits (WebDriverWait) for the rows the scripts render, and reads a
table in one script call so a re-render between two reads cannot mix two versions of it.
Screenshots of what is checked are kept in ``artifacts/`` at the repository root (gitignored).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Literal
import pytest
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.chrome.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from common.config import Settings
from producer.client import Client
from producer.items import Item
from producer.launch import free_port

REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "artifacts"
CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
SHARDS = ("gpu0", "gpu1")
# As the probe of this machine runs it as root: no sandbox, no GPU, and no background
# connections (the closed network refuses them), in a fresh profile (added per test).
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--window-size=1400,1100")
WAIT_S = 120  # the dashboard polls every 2.5 s; two vLLM engines share the machine's cores
QUESTIONS = ("Name a colour.", "Name a fruit.", "Name an animal.", "Name a country.",
             "Name a planet.", "Name a metal.", "Name a tree.", "Name a river.",
             "Name a flower.", "Name a city.", "Name a sport.", "Name a bird.")

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(CHROMIUM is None or CHROMEDRIVER is None,
                       reason="needs Debian's chromium and chromium-driver packages "
                              "(/usr/bin/chromium, /usr/bin/chromedriver; scripts/setup.sh installs them)"),
]

# Each table row's cells' visible text, read in one go (the scripts replace the rows on each poll).
ROWS_JS = """return Array.from(document.querySelectorAll(arguments[0])).map(
    tr => Array.from(tr.cells).map(td => td.innerText.trim()));"""
JOB_LINKS_JS = """return Array.from(document.querySelectorAll('table#jobs tr[data-role=job]')).map(
    tr => [tr.dataset.jobId, tr.querySelector('div.job_id a').href]);"""
JOB_PAGE_JS = """const pre = document.querySelector('#job-data pre');
return pre ? [document.querySelector('h2').innerText, document.querySelector('#job-data').innerText,
              pre.innerText] : null;"""


@pytest.fixture
def dashboard(worker_url: str, tmp_path: Path) -> Iterator[str]:
    """``prefixq dashboard`` on a free port, for the workers' database; its base URL."""
    port = free_port()
    log_path = tmp_path / "dashboard.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "producer.cli", "dashboard", "--port", str(port)],
            env={**os.environ, "PREFIXQ_REDIS_URL": worker_url}, cwd=REPO,
            stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_answers(f"{base}/", proc, log_path)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
    assert proc.returncode is not None  # stopped


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[WebDriver]:
    """Headless Debian Chromium through Debian's chromedriver (Selenium downloads nothing)."""
    assert CHROMIUM is not None and CHROMEDRIVER is not None
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'chromium-profile'}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()


def test_dashboard_in_chromium_while_two_workers_process_a_burst(
        workers: object, worker_url: str, dashboard: str, browser: WebDriver) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    shots = {name: ARTIFACTS / f"dashboard-{name}.png" for name in ("queues", "workers", "jobs", "job")}
    for shot in shots.values():
        shot.unlink(missing_ok=True)  # so the checks below see this run's screenshots
    wait = WebDriverWait(browser, WAIT_S, ignored_exceptions=(StaleElementReferenceException,))
    client = Client(Settings.from_env(redis_url=worker_url, max_tokens=16))
    items = [Item.prompt(q, tag=f"burst/{i}", temperature=0.0) for i, q in enumerate(QUESTIONS)]
    submission = client.submit_many(items, policy="round-robin")

    # While the workers process the burst: both queues, then both workers.
    browser.get(f"{dashboard}/")
    queues = wait.until(_queue_rows)
    for shard in SHARDS:  # name, queued, deferred, scheduled, started, finished, failed, canceled
        assert len(queues[shard]) == 8 and all(cell.isdigit() for cell in queues[shard][1:]), queues
    browser.save_screenshot(str(shots["queues"]))

    browser.get(f"{dashboard}/0/view/workers")
    # name, current job ('idle' or the job's call string, linked to its page), queues
    by_queue = wait.until(_worker_rows)
    for shard in SHARDS:
        row = by_queue[shard]
        assert row[0].startswith(f"{shard}."), by_queue  # the worker is named after its shard
        assert row[1] == "idle" or row[1].startswith("prefixq.generate("), by_queue
    browser.save_screenshot(str(shots["workers"]))

    results = submission.wait(timeout=900)
    assert all(r.is_ok for r in results), [r.error for r in results if not r.is_ok]
    per_shard = {shard: sum(r.completion.shard == shard for r in results)  # type: ignore[union-attr]
                 for shard in SHARDS}
    assert all(per_shard.values()), per_shard  # round-robin: both shards got work

    # After the burst the queues page counts each shard's finished jobs (at least ours).
    browser.get(f"{dashboard}/")
    wait.until(lambda d: _all_finished_shown(d, per_shard))

    # A finished job: its link in the dashboard's list of the shard's finished jobs, newest first
    # (the URL rq-dashboard's own pages build), then its page.
    finished = results[0]
    assert finished.completion is not None
    shard = finished.completion.shard
    browser.get(f"{dashboard}/0/view/jobs/{shard}/finished/100/dsc/1")
    links = wait.until(lambda d: _job_links(d, finished.job_id))
    ours = {job_id for job_id, r in zip(submission.job_ids, results) if r.completion.shard == shard}  # type: ignore[union-attr]
    assert ours <= set(links), (ours, links)
    job_url = links[finished.job_id]
    assert job_url == f"{dashboard}/0/view/job/{finished.job_id}"
    browser.save_screenshot(str(shots["jobs"]))

    browser.get(job_url)
    heading, job_text, result_json = wait.until(lambda d: d.execute_script(JOB_PAGE_JS))
    assert finished.job_id in heading
    assert f"Origin queue:\n{shard}" in job_text and "Status:\nfinished" in job_text, job_text
    shown = json.loads(result_json)  # the page prints the stored result as JSON
    assert shown["text"] == finished.completion.text and finished.completion.text.strip()
    assert shown["shard"] == shard and shown["completion_tokens"] == finished.completion.completion_tokens
    browser.save_screenshot(str(shots["job"]))

    # No page logged an error (a failed JSON endpoint, a missing script or stylesheet).
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]  # type: ignore[no-untyped-call]
    assert not errors, errors
    for shot in shots.values():
        _assert_png(shot)


def _queue_rows(driver: WebDriver) -> dict[str, list[str]] | Literal[False]:
    """The queues table's rows keyed by queue name, once both shards' queues are there."""
    rows = {row[0]: row for row in driver.execute_script(ROWS_JS, "table#queues tr[data-role=queue]") if row}
    return rows if set(SHARDS) <= set(rows) else False


def _all_finished_shown(driver: WebDriver, per_shard: dict[str, int]) -> bool:
    """Whether the queues table counts at least ``per_shard[shard]`` finished jobs on each shard."""
    rows = _queue_rows(driver)  # name, queued, deferred, scheduled, started, finished, ...
    return bool(rows) and all(int(rows[shard][5]) >= n for shard, n in per_shard.items())  # type: ignore[index]


def _worker_rows(driver: WebDriver) -> dict[str, list[str]] | Literal[False]:
    """The workers table's rows keyed by their queues cell, once both shards' workers are there."""
    rows = {row[2]: row for row in driver.execute_script(ROWS_JS, "table#workers tr[data-role=worker]")
            if len(row) == 3}
    return rows if set(SHARDS) <= set(rows) else False


def _job_links(driver: WebDriver, job_id: str) -> dict[str, str] | Literal[False]:
    """The jobs table's job pages keyed by job id, once ``job_id`` is listed."""
    links = {row[0]: row[1] for row in driver.execute_script(JOB_LINKS_JS)}
    return links if job_id in links else False


def _wait_until_answers(url: str, proc: subprocess.Popen[bytes], log_path: Path, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"prefixq dashboard exited with {proc.returncode}:\n{log_path.read_text()}")
        try:
            with urllib.request.urlopen(url, timeout=5) as reply:
                if reply.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError):
            pass  # not listening yet
        time.sleep(0.1)
    raise AssertionError(f"prefixq dashboard did not answer {url} in {timeout_s:.0f} s:\n{log_path.read_text()}")


def _assert_png(path: Path) -> None:
    data = path.read_bytes() if path.exists() else b""
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 1000, f"{path}: not a PNG screenshot"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width > 0 and height > 0, path
