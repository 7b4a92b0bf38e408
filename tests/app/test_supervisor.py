"""The workshop command, ``python -m ui.serve`` (issue 18): two app processes behind HAProxy.

Two tabs from one address (every tab here comes from 127.0.0.1, a venue's one address) land in
different processes; an upload works in each; killing one process loses no other tab's session,
and the killed process's tab reconnects to a live one with its corpus and settings restored; the
command restarts the dead process and, stopped, leaves no process behind.  Waits are on what the
app or the command reports; the only processes killed are those this test started.
"""

import csv
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import IN_CI
from test_browser import CHROMIUM, NAVIGATION_MS, choose_settings, chromium_context, idle
from ui.serving.supervisor import (BACKEND, COOKIE, Child, find_haproxy, free_port, haproxy_config,
                                   healthy)

ROOT = Path(__file__).resolve().parents[2]
KEY = "serve-test-instructor-key"
START_S = 300          # two app processes importing torch & co. at once, on 2 busy cores
TEXTS = {name: f"{name}: " + " ".join(f"{name} the lower newer wider word {i}" for i in range(200))
         for name in ("corpus-a", "corpus-b", "corpus-a-again")}


def _need(path: Path, what: str) -> None:
    if not path.exists():
        message = f"{path} is missing: install {what} to run this test"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)


def _haproxy() -> str:
    try:
        return find_haproxy()
    except SystemExit as exc:
        if IN_CI:
            pytest.fail(str(exc))
        pytest.skip(str(exc))


def _gone(pid: int) -> bool:
    """No such process, or only its exit status left (a zombie not yet reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def _wait(condition, bound: float, what: str, pg=None) -> None:
    """Until ``condition()``; ``pg`` lets Playwright deliver a page's events meanwhile."""
    deadline = time.monotonic() + bound
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not after {bound:.0f} s"
        if pg is not None:
            pg.wait_for_timeout(200)
        else:
            time.sleep(0.2)


@contextmanager
def served(tmp_path: Path, processes: int, env: dict):
    """``python -m ui.serve`` on a free port; yields the process and its status file's path.  On the
    way out it is stopped if still running, and any app process it left is killed (none should be)."""
    _haproxy()
    status, log = tmp_path / "serve.json", tmp_path / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "ui.serve", "--processes", str(processes),
                                 "--port", str(free_port()), "--status-file", str(status)],
                                cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **env})
    pids: list[int] = []
    try:
        _wait(lambda: status.exists() or proc.poll() is not None, START_S, "the command's status file")
        assert proc.poll() is None, f"ui.serving.supervisor exited: {log.read_text()[-3000:]}"
        yield proc, status
    finally:
        if status.exists():
            pids = [p["pid"] for p in json.loads(status.read_text())["processes"].values()]
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=60)
        for pid in pids:
            if not _gone(pid):
                os.kill(pid, signal.SIGKILL)


def test_the_proxy_configuration_pins_by_a_cookie_it_sets(tmp_path):
    """HAProxy itself accepts the configuration, which pins by the proxy's own cookie, never by
    the client's address, and keeps websockets open for a workshop."""
    haproxy = _haproxy()
    apps = [Child(f"p{i}", [], port=40000 + i) for i in (1, 2)]
    config = haproxy_config("0.0.0.0", 8501, apps, tmp_path / "stats.sock")
    path = tmp_path / "haproxy.cfg"
    path.write_text(config)
    checked = subprocess.run([haproxy, "-c", "-f", str(path)], capture_output=True, text=True,
                             check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"cookie {COOKIE} insert indirect nocache" in config
    assert "balance source" not in config and "stick" not in config
    assert "timeout tunnel 8h" in config and "option redispatch" in config


def test_without_haproxy_the_command_says_how_to_install_it(tmp_path):
    done = subprocess.run([sys.executable, "-m", "ui.serve", "--haproxy", str(tmp_path / "none")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode != 0
    assert "apt-get install haproxy" in done.stderr and "streamlit run" in done.stderr


# -- a room of two tabs on two processes ---------------------------------------------------------------
class Tab:
    """A page in a browser context of its own (another attendee), counting, per websocket it opened,
    the script runs the server finished on it."""

    def __init__(self, context, url: str):
        from playwright.sync_api import expect

        self.context, self.runs = context, []
        self.page = context.new_page()
        self.page.on("websocket", self._opened)
        self.page.goto(url)
        expect(self.page.get_by_role("heading", name="Learn BPE")).to_be_visible(timeout=NAVIGATION_MS)
        idle(self.page)

    def _opened(self, ws) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        runs = [0]
        self.runs.append(runs)

        def received(payload) -> None:
            if isinstance(payload, bytes):
                msg = ForwardMsg()
                msg.ParseFromString(payload)
                runs[0] += msg.WhichOneof("type") == "script_finished"
        ws.on("framereceived", received)

    @property
    def pin(self) -> str:
        return next(c["value"] for c in self.context.cookies() if c["name"] == COOKIE)

    def upload(self, folder: Path, name: str) -> None:
        from playwright.sync_api import expect

        path = folder / f"{name}.txt"
        path.write_text(TEXTS[name], encoding="utf-8")
        self.page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(path))
        expect(in_use(self.page, path.name)).to_be_visible(timeout=60_000)
        idle(self.page)


def proxy_sessions(stats_socket) -> dict[str, int]:
    """Connections open now on each app process, from HAProxy's stats socket: a tab holds one
    websocket, and its browser keeps a few more open between requests."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(5)
        s.connect(str(stats_socket))
        s.sendall(b"show stat\n")
        data = b"".join(iter(lambda: s.recv(65536), b""))
    rows = csv.DictReader(io.StringIO(data.decode().lstrip("# ")))
    return {r["svname"]: int(r["scur"]) for r in rows
            if r["pxname"] == BACKEND and r["svname"] not in ("BACKEND", "FRONTEND")}


def in_use(page, name: str):
    """The sidebar's summary naming the corpus in use, ``name`` (the uploader's own chip, which
    shows the file's name too until the run that loaded it ends, is not it)."""
    bold = page.get_by_test_id("stSidebar").locator("strong")
    return bold.filter(has_text=re.compile(rf"^{re.escape(name)}$"))


def _become_instructor(pg) -> None:
    """Instructor mode: session state that no URL holds."""
    from playwright.sync_api import expect

    pg.get_by_role("link", name="Train a GPT").click()
    expect(pg.get_by_role("heading", name="Train a GPT")).to_be_visible(timeout=NAVIGATION_MS)
    idle(pg)
    pg.get_by_text("Instructor", exact=True).click()
    box = pg.get_by_label("Instructor key", exact=True)
    box.fill(KEY)
    box.press("Enter")
    expect(pg.get_by_text("Instructor mode:", exact=False)).to_be_visible(timeout=60_000)
    idle(pg)


def test_a_process_that_stops_answering_is_killed_then_started_again(monkeypatch):
    """Hung (alive, but its health check unanswered): the proxy would keep its attendees there,
    so the command kills it after ``HUNG_S`` and restarts it like a process that died."""
    from ui.serving import supervisor

    monkeypatch.setattr(supervisor, "READY_S", 0.0)
    monkeypatch.setattr(supervisor, "HEALTH_EVERY_S", 0.05)
    monkeypatch.setattr(supervisor, "HUNG_S", 0.3)
    hung = supervisor.Child("p1", [sys.executable, "-c", "import time; time.sleep(300)"],
                            port=supervisor.free_port())
    hung.start()
    try:
        first = hung.pid
        deadline = time.monotonic() + 30
        while hung.alive():  # nothing answers on its port: it never says it is healthy
            assert time.monotonic() < deadline, "a hung process was left running"
            hung.watch(time.monotonic())
            time.sleep(0.05)
        hung.tend(time.monotonic())
        while not hung.tend(time.monotonic()):  # the restart comes after its pause
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert hung.alive() and hung.pid != first and hung.restarts == 1
    finally:
        hung.signal_stop()
        hung.wait_stopped(time.monotonic() + 5)


@pytest.mark.browser
@pytest.mark.slow
def test_two_tabs_spread_over_two_processes_and_survive_one_dying(tmp_path):
    from playwright.sync_api import expect

    _need(CHROMIUM, "Debian's chromium")
    env = {"BPE_EXPLORER_RUNS_DIR": str(tmp_path / "runs"), "BPE_EXPLORER_INSTRUCTOR_KEY": KEY}
    with served(tmp_path, 2, env) as (proc, status_path), chromium_context() as new_context:
        status = json.loads(status_path.read_text())
        learn = status["url"] + "/learn_bpe"
        a, b = Tab(new_context(), learn), Tab(new_context(), learn)
        assert {a.pin, b.pin} == {"p1", "p2"}, "two tabs from one address share a process"
        assert all(n >= 1 for n in proxy_sessions(status["stats_socket"]).values())  # by HAProxy's count

        a.upload(tmp_path, "corpus-a")
        b.upload(tmp_path, "corpus-b")
        choose_settings(a.page, "word", 12)
        expect(a.page.get_by_role("radio", name="word")).to_be_checked()
        _become_instructor(b.page)

        dead = a.pin
        os.kill(status["processes"][dead]["pid"], signal.SIGKILL)
        # no click: the tab runs again by itself in a new session
        # (``ui.serving.supervisor.rerun_on_reconnect``)
        _wait(lambda: len(a.runs) >= 2 and a.runs[-1][0] >= 1, 120, "tab A's run on a new websocket", a.page)
        assert not _gone(json.loads(status_path.read_text())["processes"][a.pin]["pid"])
        expect(in_use(a.page, "corpus-a.txt")).to_be_visible(timeout=60_000)
        expect(a.page.get_by_role("radio", name="word")).to_be_checked(timeout=30_000)
        expect(a.page.get_by_label("Merges", exact=True)).to_have_value("12", timeout=30_000)
        a.upload(tmp_path, "corpus-a-again")  # the XSRF cookie holds on whichever process it is now
        assert a.page.locator('[data-testid="stException"]').count() == 0

        expect(in_use(b.page, "corpus-b.txt")).to_be_visible()
        b.page.get_by_role("link", name="Learn BPE").click()  # a rerun on the surviving process
        expect(b.page.get_by_role("heading", name="Learn BPE")).to_be_visible(timeout=NAVIGATION_MS)
        b.page.get_by_role("link", name="Train a GPT").click()
        expect(b.page.get_by_text("Instructor mode:", exact=False)).to_be_visible(timeout=60_000)
        expect(in_use(b.page, "corpus-b.txt")).to_be_visible()
        assert len(b.runs) == 1, "the surviving tab's websocket was reconnected"

        def restarted() -> bool:
            process = json.loads(status_path.read_text())["processes"][dead]
            return process["restarts"] == 1 and healthy(process["port"])
        _wait(restarted, START_S, f"{dead} restarted by the command")
        status = json.loads(status_path.read_text())
        pids = [status["proxy_pid"], *(p["pid"] for p in status["processes"].values())]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        assert all(_gone(pid) for pid in pids), "a process outlived the command"
        assert not status_path.exists() and not Path(status["stats_socket"]).parent.exists()


@pytest.mark.slow
def test_the_proxy_sends_streamlit_s_scripts_compressed_to_a_browser_that_accepts_gzip(tmp_path):
    """A room's fresh tabs fetch Streamlit's frontend, which its process sends uncompressed: through
    the proxy a browser that accepts gzip gets the same bytes in a fraction of the size (what a
    venue's Wi-Fi carries for each new attendee); one that does not gets them as they are."""
    import gzip
    import re
    import urllib.request

    with served(tmp_path, 1, {"BPE_EXPLORER_RUNS_DIR": str(tmp_path / "runs")}) as (_, status_path):
        url = json.loads(status_path.read_text())["url"]

        def fetch(path: str, encoding: str) -> tuple[bytes, str | None]:
            request = urllib.request.Request(url + path, headers={"Accept-Encoding": encoding})
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.read(), response.headers.get("Content-Encoding")

        page, _ = fetch("/", "identity")
        script = re.search(rb'src="\.?/?(static/js/index\.[^"]+\.js)"', page).group(1).decode()
        plain, plain_encoding = fetch("/" + script, "identity")
        packed, packed_encoding = fetch("/" + script, "gzip, deflate, br")
    assert plain_encoding is None and packed_encoding == "gzip"
    assert gzip.decompress(packed) == plain
    assert len(packed) < len(plain) / 2, (len(packed), len(plain))


@pytest.mark.slow
def test_killed_outright_the_command_takes_its_processes_along(tmp_path):
    """Even SIGKILL, which no handler sees, leaves no app process or proxy behind (Linux)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the parent-death signal is Linux's")
    with served(tmp_path, 1, {"BPE_EXPLORER_RUNS_DIR": str(tmp_path / "runs")}) as (proc, status_path):
        status = json.loads(status_path.read_text())
        pids = [status["proxy_pid"], *(p["pid"] for p in status["processes"].values())]
        proc.kill()
        proc.wait()
        _wait(lambda: all(_gone(pid) for pid in pids), 60, "every child gone")
        shutil.rmtree(Path(status["stats_socket"]).parent)  # what the command had no chance to remove


@pytest.mark.slow
def test_two_app_processes_send_their_heavy_jobs_to_the_runs_folders_one_engine(tmp_path):
    """Issue 42: with two app processes and one job worker configured, two attendees in different
    processes paste large texts at once; both get Learn BPE's final view, and at no moment does the
    machine run more than the one job worker, forked for the engine one of them started."""
    import asyncio

    sys.path.insert(0, str(ROOT / "bench"))
    from bench_hostile_room import PASTE_LABEL, has_step_view, page_run
    from bench_process_room import TreeSampler, parent
    from streamlit_client import Session
    from core.room.engine_link import engine_address
    from core.samples import python_docs_corpus

    text = python_docs_corpus(300_000)  # above what a page trains inline: a job

    async def attendee(url: str, i: int, pins: list) -> bool:
        while len(pins) < i:  # the second arrives once the first holds its websocket: leastconn then
            await asyncio.sleep(0.1)  # sends it to the other process (arriving together, both met p2)
        s = Session(url, query=f"u=serve-test-owner-{i:04d}-xxxx", path="")
        await s.connect()
        await s.rerun(timeout=START_S)
        pins.append(s.cookies.get(COOKIE))
        while len(pins) < 2:  # both tabs hold a websocket before either pastes: one on each process
            await asyncio.sleep(0.1)
        s.keep(PASTE_LABEL, string_value=f"attendee {i}\n{text}")
        await page_run(s, "", START_S)
        await page_run(s, "learn_bpe", START_S)
        shown = has_step_view(s)
        await s.close()
        return shown

    async def room(url: str) -> tuple[list, list]:
        pins: list = []
        return await asyncio.gather(attendee(url, 0, pins), attendee(url, 1, pins)), pins

    env = {"BPE_EXPLORER_RUNS_DIR": str(tmp_path / "runs"), "BPE_EXPLORER_JOB_WORKERS": "1"}
    with served(tmp_path, 2, env) as (proc, status_path):
        status = json.loads(status_path.read_text())
        tree = TreeSampler(proc.pid, tmp_path / "runs")
        tree.start()
        shown, pins = asyncio.run(room(status["url"]))
        tree.stop()
        assert sorted(pins) == ["p1", "p2"]
        assert shown == [True, True]
        assert tree.most_workers == 1, "more job workers than the machine's one"
        assert {parent(server) for server in tree.servers} == {engine_address(tmp_path / "runs")[2]}
