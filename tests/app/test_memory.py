"""What gives the server's memory back when a room leaves (``ui.serving.memory``,
``ui.serving.bounded_cache``): idle cache entries go, expired sessions are closed on a real
Streamlit runtime (through the private attributes this Streamlit keeps them in: an upgrade that
moves them fails here), and memory is trimmed when sessions end; full collections, which pause
every session, come rarely.  The RSS figures are in bench/bench_server.py, not here."""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys
import threading
import time
import weakref

import pytest
from streamlit.runtime import Runtime, RuntimeConfig
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.runtime.memory_session_storage import MemorySessionStorage
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.uploaded_file_manager import UploadedFileRec

from app_helpers import ROOT, open_page
from ui.serving import memory
from ui.serving.bounded_cache import BoundedCache


def test_entries_nobody_uses_go_and_used_ones_stay(monkeypatch):
    # this test's cache alone: the shared caches earlier AppTests filled go idle in a long run
    monkeypatch.setattr(BoundedCache, "_all", weakref.WeakSet())
    cache = BoundedCache(8, 2**20, idle_s=600)
    cache.put("left with the room", 1)
    cache.put("still read", 2)
    cache.get("still read")
    later = cache._items["still read"][2] + 599  # 10 minutes after the room's last step, less 1 s
    cache._items["left with the room"] = (1, 0, later - 600)
    assert cache.drop_idle(now=later) == 1
    assert cache.get("left with the room") is None and cache.get("still read") == 2
    assert BoundedCache.drop_idle_everywhere() == 0  # nothing idle by the clock: nothing goes


def test_housekeeping_trims_when_sessions_end(monkeypatch):
    trims, here = [], threading.get_ident()

    def trim() -> bool:  # counted on this thread only: an earlier AppTest's housekeeper may tidy meanwhile
        if threading.get_ident() == here:
            trims.append(1)
        return True

    monkeypatch.setattr(memory, "trim", trim)
    # what earlier tests left in the shared caches is not this test's (it would be dropped, and trimmed)
    monkeypatch.setattr(memory.BoundedCache, "drop_idle_everywhere", staticmethod(lambda: 0))
    monkeypatch.setattr(memory.BoundedCache, "drop_orphans_everywhere", staticmethod(lambda orphans: 0))
    monkeypatch.setattr(memory, "session_count", lambda: 3)
    monkeypatch.setattr(memory, "close_expired_sessions", lambda: 0)
    assert memory.tidy(3) == (3, False) and trims == []    # nobody left: no collection, no trim
    assert memory.tidy(5) == (3, True) and trims == [1]    # two left
    monkeypatch.setattr(memory, "close_expired_sessions", lambda: 2)
    assert memory.tidy(3) == (3, True) and trims == [1, 1]  # two expired sessions closed


def test_a_busy_room_is_collected_at_most_once_per_period(monkeypatch):
    """Fresh tabs ending every round owe memory each time; a full collection (a GIL pause for the
    whole room) runs at once, then at most every COLLECT_EVERY_S, and what is owed is paid."""
    collections = []
    monkeypatch.setattr(memory, "give_back", lambda: collections.append(1))
    monkeypatch.setattr(memory, "close_expired_sessions", lambda: 1)  # a session ends every round
    monkeypatch.setattr(memory, "session_count", lambda: 3)
    state = (3, False, float("-inf"))
    for now in range(0, 60, 5):  # a minute of rounds
        state = memory.housekeeping_round(*state, now=float(now))
    assert len(collections) == 2 and state[1:] == (True, 30.0)  # at 0 and 30 s; 55 s still owed
    monkeypatch.setattr(memory, "close_expired_sessions", lambda: 0)  # the room has left
    state = memory.housekeeping_round(*state, now=60.0)
    assert len(collections) == 3 and state[1:] == (False, 60.0)
    memory.housekeeping_round(*state, now=95.0)
    assert len(collections) == 3  # nothing owed: nothing collected


def test_trim_and_arena_cap_work_on_glibc_and_do_nothing_elsewhere():
    if memory._glibc() is None:
        assert not memory.trim() and not memory.limit_arenas()
    else:
        assert memory.limit_arenas() is True
        memory.trim()  # may find nothing to give back; must not fail


class _Client:
    """A tab that receives nothing (the session never runs its script)."""

    def write_forward_msg(self, msg) -> None:
        pass

    client_context = None


@pytest.fixture
def runtime(tmp_path):
    """A started Streamlit runtime that keeps a disconnected session 60 s for a reconnect."""
    script = tmp_path / "app.py"
    script.write_text("")
    rt = Runtime(RuntimeConfig(script_path=str(script),
                               media_file_storage=MemoryMediaFileStorage("/media"),
                               uploaded_file_manager=MemoryUploadedFileManager("/upload"),
                               session_storage=MemorySessionStorage(ttl_seconds=60)))
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(rt.start(), loop).result(30)
    try:
        yield rt, loop
    finally:
        rt.stop()

        async def stopped() -> None:
            await rt.stopped

        asyncio.run_coroutine_threadsafe(stopped(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        Runtime._instance = None


def test_expired_sessions_are_closed_rather_than_kept_until_someone_else_leaves(runtime):
    rt, loop = runtime

    async def arrive_and_leave() -> list[str]:
        ids = [rt.connect_session(_Client(), {}) for _ in range(3)]
        for session_id in ids:
            rt.disconnect_session(session_id)
        return ids

    ids = asyncio.run_coroutine_threadsafe(arrive_and_leave(), loop).result(30)
    uploads = rt.uploaded_file_mgr
    uploads.add_file(ids[0], UploadedFileRec("f1", "corpus.txt", "text/plain", b"x" * 2**20))
    stored = rt._session_mgr._session_storage._cache
    sessions = [stored._data[i].session for i in ids]
    assert memory.close_expired_sessions() == 0  # still within their time to reconnect
    stored._timer = lambda: time.monotonic() + 61  # a minute later: the room has gone
    assert len(stored._data) == 3  # yet Streamlit keeps it until another session disconnects
    assert len(uploads.get_files(ids[0], ["f1"])) == 1  # and its uploads
    memory.close_expired_sessions()  # (or the housekeeper of an AppTest run in this process)
    assert len(stored._data) == 0 and memory.session_count() == 0
    assert all(s._state.name == "SHUTDOWN_REQUESTED" for s in sessions)
    assert uploads.get_files(ids[0], ["f1"]) == []  # the upload has gone with its session


def test_what_was_made_for_a_corpus_nobody_has_goes(runtime, monkeypatch):
    """An attendee who pasted a text leaves: once their session is closed, the tokenizers and
    payloads the shared caches keep for that text go at the next round, not 10 idle minutes
    later; a corpus another session still has keeps its entries."""
    rt, loop = runtime

    async def arrive() -> list[str]:
        return [rt.connect_session(_Client(), {}) for _ in range(3)]

    pasted, sample, other = asyncio.run_coroutine_threadsafe(arrive(), loop).result(30)
    monkeypatch.setattr(memory, "_holders", {pasted: "pasted-hash", sample: "sample-hash",
                                             other: "sample-hash"})  # as their page runs noted
    store, payloads = BoundedCache(8, 2**20), BoundedCache(8, 2**20)
    store.put(("pasted-hash", "char", "", ""), "its tokenizer")
    store.put(("sample-hash", "char", "", ""), "the sample's tokenizer")
    tokenizer = type("Tokenizer", (), {})()
    payloads.made_for(tokenizer, ("window", 0), lambda: "a step view's payload")
    assert memory.orphaned_corpora() == set()  # everybody is here

    async def leave(*ids: str) -> None:
        for session_id in ids:
            rt.disconnect_session(session_id)

    asyncio.run_coroutine_threadsafe(leave(pasted, other), loop).result(30)
    stored = rt._session_mgr._session_storage._cache
    stored._timer = lambda: time.monotonic() + 61  # their time to reconnect has passed
    memory.tidy(3)
    assert store.get(("pasted-hash", "char", "", "")) is None
    assert store.get(("sample-hash", "char", "", "")) == "the sample's tokenizer"  # one has it still
    assert len(payloads) == 1  # its tokenizer is alive
    del tokenizer  # the store let it go
    memory.tidy(1)
    assert len(payloads) == 0
    assert memory._holders == {sample: "sample-hash"}


def test_an_app_process_collects_young_objects_less_often_than_python_s_default():
    open_page("start_here")  # any page run starts the process's housekeeping
    assert gc.get_threshold()[0] == memory.YOUNG_COLLECTION_EVERY > 700


FIRST_RUN = """
import gc, sys, weakref
from streamlit.testing.v1 import AppTest
at = AppTest.from_file(sys.argv[1], default_timeout=120)
if sys.argv[2] == "comes back":  # a tab of a restarted process, back with its paste
    at.session_state["corpus_name"] = "Pasted text"
    at.session_state["corpus_text"] = "a pasted text " * 100_000
at.run()
assert not at.exception, at.exception
from ui.views import chat_view, run_view
tracked = {id(o) for o in gc.get_objects()}
class Cycle:
    pass
made = Cycle()
made.me = made  # what a session makes after the freeze is still collected
gone = weakref.ref(made)
del made
gc.collect()
print(gc.get_freeze_count() > 0, id(vars(run_view)) in tracked or id(vars(chat_view)) in tracked,
      gone() is None)
"""


@pytest.mark.parametrize("tab", ["fresh", "comes back"])
def test_a_full_collection_leaves_out_the_app_s_modules_but_nothing_of_an_attendee_s(tab, tmp_path):
    """A full collection holds the GIL while it walks what it tracks.  A process whose first run is
    a fresh tab's freezes the app's modules out of the walk (every page's view, those of pages
    nobody opened yet included); one whose first tab comes back with a paste (a restarted process)
    does not, or that session's cycles would never be collected.  In a process of its own: the
    first run of this test process may be any test's."""
    env = {**os.environ, "BPE_EXPLORER_RUNS_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", FIRST_RUN, str(ROOT / "streamlit_app.py"), tab], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    frozen, modules_walked, cycle_collected = done.stdout.split()
    assert (frozen, modules_walked) == (("True", "False") if tab == "fresh" else ("False", "True"))
    assert cycle_collected == "True"
