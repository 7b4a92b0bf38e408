"""Heavy work leaves the page's thread (ui.plumbing.heavy_jobs, core.room.engine): a session with a
large corpus sees a progress bar at once and its page answers, then the result; a change of its
settings cancels its job.  Each test has a runs folder, so an engine, of its own.  The engine gets one
worker, held by someone else's job until the test lets it go, so what the page shows while it waits
does not depend on the machine's speed."""

from __future__ import annotations

import os
import random
import signal
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import poll_until_done, progress_texts, step_view, paste_box
from core.digest import text_digest
from core.room.engine import IDLE_ENV
from core.room.engine_link import engine_address
from core.room.jobs import JobState
from core.settings import ServerSettings
from tests.room import job_functions
from ui.plumbing import cache, heavy_jobs

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 120  # a worker's first start and a 250 KB training, on a busy 2-core machine


@pytest.fixture(autouse=True)
def own_engine(tmp_path, monkeypatch):
    """This test's runs folder, whose engine leaves soon after the test (killed if it is still
    there), and a page plumbing that has not linked to any engine yet."""
    monkeypatch.setenv("BPE_EXPLORER_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv(IDLE_ENV, "5")
    heavy_jobs._interface.clear()
    yield
    heavy_jobs._interface.clear()
    found = engine_address(tmp_path / "runs")
    if found is not None:
        try:
            os.kill(found[2], signal.SIGKILL)
        except ProcessLookupError:
            pass


def fresh_engine(settings: ServerSettings):
    """An engine that has done nothing yet, and no corpus's counts kept by the app from another test."""
    heavy_jobs._interface.clear()
    cache._counted().drop_where(lambda key, value: True)
    return heavy_jobs.jobs_interface(settings)


def job_state(engine, key):
    job = engine.job(key)
    return None if job is None else job.state


@pytest.fixture
def one_worker():
    """A fresh engine with one worker, busy with another attendee's job until released."""
    engine = fresh_engine(ServerSettings(job_workers=1))
    engine.submit("another attendee", "blocker", job_functions.forever)
    deadline = time.monotonic() + WAIT_S
    while engine.job("blocker").progress[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert job_state(engine, "blocker") is JobState.RUNNING
    yield engine
    engine.cancel("another attendee")


def big_corpus(seed: int = 7) -> str:
    """Over the inline threshold: ~250 KB of words from a small vocabulary."""
    rng = random.Random(seed)
    words = ["low", "lower", "newest", "widest", "tokens", "merge", "pair", "byte"]
    return " ".join(rng.choice(words) for _ in range(45_000))


def learn_page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=WAIT_S).run()
    at.switch_page("app_pages/learn_bpe.py").run()
    return at


@pytest.mark.slow
def test_a_large_corpus_shows_progress_then_the_result_and_a_change_cancels_its_job(one_worker):
    heavy = learn_page()
    paste_box(heavy).set_value(big_corpus()).run()
    assert not heavy.exception, [e.message for e in heavy.exception]
    texts = progress_texts(heavy)
    assert "Training char BPE: waiting for a free job worker… (0 s)" in texts, texts
    assert any(t.startswith("Counting the corpus: waiting") for t in texts), texts  # in the sidebar
    merges = heavy.number_input(key="w_num_merges").value
    first = ("train", (text_digest(big_corpus()), "char", "", ""), merges)
    assert job_state(one_worker, first) is JobState.QUEUED

    calm = learn_page()  # another attendee on a sample: served at once, whatever the first waits for
    assert not progress_texts(calm) and step_view(calm)[2]["n"] > 0
    assert job_state(one_worker, first) is JobState.QUEUED

    heavy.number_input(key="w_num_merges").set_value(40).run()  # new settings: the old job goes
    assert job_state(one_worker, first) is None  # cancelled: nobody asks for it, nothing kept
    assert any(t.startswith("Training char BPE") for t in progress_texts(heavy))

    one_worker.cancel("another attendee")  # the worker is free: the new jobs run
    poll_until_done(heavy)
    assert not heavy.exception, [e.message for e in heavy.exception]
    _, _, data = step_view(heavy)
    assert data["n"] == 40
    assert any(f"| Characters | {len(big_corpus()):,} |" in m.value for m in heavy.sidebar.markdown)


@pytest.mark.slow
def test_a_counted_corpus_is_shown_at_once_after_the_engine_has_gone(tmp_path):
    """The sidebar's counts of a large corpus are kept by the app: an idle engine leaves with what it
    kept, and then every page of that corpus counted it again, whose end reran the whole page and
    dropped what a click had just drawn there (a Generate's text)."""
    text = big_corpus(seed=8)  # a corpus of its own: what it trains is kept for the room
    at = learn_page()
    paste_box(at).set_value(text).run()
    poll_until_done(at)
    os.kill(engine_address(tmp_path / "runs")[2], signal.SIGKILL)
    at.run()
    assert not progress_texts(at), progress_texts(at)
    assert any(f"| Characters | {len(text):,} |" in m.value for m in at.sidebar.markdown)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["char", "byte"])
def test_a_training_over_the_time_bound_says_what_happened_and_what_to_do(variant):
    fresh_engine(ServerSettings(job_workers=1, job_time_s=0.01))  # nothing fits in 10 ms
    at = learn_page()
    at.radio(key="w_variant").set_value(variant).run()
    paste_box(at).set_value(big_corpus()).run()
    poll_until_done(at)
    assert not at.exception, [e.message for e in at.exception]
    [error] = [e.value for e in at.error]
    assert f"Training {variant} BPE was stopped" in error and "longer than this server allows" in error
    assert "fewer merges" in error
    assert ("byte variant" in error) == (variant != "byte")  # never advise what was asked


@pytest.mark.slow
@pytest.mark.parametrize("page_name", ["char_vs_bpe", "compare_tokenizers"])
def test_the_other_bpe_pages_end_with_their_result_on_a_large_corpus(page_name):
    fresh_engine(ServerSettings())  # nothing kept from another test: the first run waits
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=WAIT_S).run()
    at.switch_page(f"app_pages/{page_name}.py").run()
    paste_box(at).set_value(big_corpus()).run()
    assert progress_texts(at)  # the statistics at least, in a worker
    if page_name == "compare_tokenizers":
        at.selectbox(key="w_tokenizers_pick").set_value("__corpus__").run()
    poll_until_done(at)
    assert not at.exception and not at.error, [e.message for e in at.exception] + [e.value for e in at.error]
    last = {"char_vs_bpe": "The test text, token by token",
            "compare_tokenizers": "Cost per script: tokens per character"}[page_name]
    assert last in [h.value for h in at.subheader]  # the page ran to its end


@pytest.mark.slow
def test_a_dask_cluster_that_does_not_answer_is_a_message_and_asked_again(monkeypatch):
    """A room configured for a Dask cluster that is down: the page that needs a job says so (after
    the connect timeout, shortened here), and the next heavy job asks again: once the cluster
    answers (here: once none is configured), the page works."""
    from core.room import dask_jobs

    monkeypatch.setattr(dask_jobs, "CONNECT_S", 1)
    monkeypatch.setenv(dask_jobs.SCHEDULER_ENV, "tcp://127.0.0.1:9")  # the discard port: nobody
    at = learn_page()
    paste_box(at).set_value(big_corpus()).run()
    errors = [e.value for e in at.error]
    assert any("The room's Dask cluster did not answer" in e for e in errors), errors
    assert not heavy_jobs._interface

    monkeypatch.delenv(dask_jobs.SCHEDULER_ENV)
    at.run()
    poll_until_done(at)
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert step_view(at)[2]["n"] > 0
