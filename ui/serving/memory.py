"""Giving the server's memory back when a room leaves.

Measured with ``bench/bench_server.py`` (why: docs/benchmarks.md, "A workshop room against one
server"), three things kept a room's memory after it had gone:

- **malloc arenas.**  glibc gives threads that allocate at the same time arenas of their own (up to
  8 per core), and Streamlit runs every script run on a fresh thread: what a room freed lay
  scattered over 16 arenas, which the allocator keeps.  :func:`limit_arenas` caps them at
  ``ARENAS`` (``mallopt(M_ARENA_MAX)``) before the first visitor's threads create more; the GIL
  lets one thread run Python at a time, so more arenas bought little.
- **Free pages inside the heap.**  glibc returns them to the system only from the top of a heap,
  or when asked: :func:`trim` (``malloc_trim(0)``).
- **Sessions kept after they expired.**  Streamlit keeps a disconnected session for
  ``server.disconnectedSessionTTL`` seconds (so a reconnect finds it), but its session storage
  drops an expired one only when another session disconnects, and never shuts it down: a room
  that leaves together stays in memory, corpora and uploads included, until the next visitor
  leaves.  :func:`close_expired_sessions` closes them on Streamlit's event loop, as Streamlit
  closes a stored session, through Streamlit's private attributes: where a Streamlit version
  keeps them elsewhere it does nothing (``tests/app/test_memory.py`` notices).

:func:`start`, called by every script run, sets the arena cap, makes Python's young collections
rarer (:func:`collect_less_often`: a full collection pauses the whole room), keeps the app's modules
out of every full collection (:func:`freeze_modules`) and starts one
housekeeper thread per process, which every ``PERIOD_S`` seconds closes expired sessions, drops
shared-cache entries idle for ``ui.serving.bounded_cache.CACHE_IDLE_S`` or made for a corpus no session
has any more, and, when sessions ended or entries went, collects garbage (a session's objects
hold cycles, and an idle server rarely runs a full collection) and trims, at most once every
``COLLECT_EVERY_S``.
On a system without glibc (macOS, Windows, musl) the allocator calls do nothing.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import functools
import gc
import importlib
import logging
import os
import pkgutil
import threading
import time

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ui.serving.bounded_cache import BoundedCache

ARENAS = 2
PERIOD_S = 5.0
# A full collection of a room's objects holds the GIL for a long moment, and the hostile room's
# fresh tabs end every few seconds: at most one per COLLECT_EVERY_S, owed until then (why:
# docs/benchmarks.md, "A room that does not behave").
COLLECT_EVERY_S = 30.0
# Python collects young objects every 700 allocations (its default): see :func:`collect_less_often`
YOUNG_COLLECTION_EVERY = 50_000
THREAD_NAME = "bpe-explorer-housekeeper"
MMAP_THRESHOLD = 256 * 2**10
# mallopt's parameter numbers in glibc's malloc.h
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
_LOG = logging.getLogger(__name__)

_start_lock = threading.Lock()
_holders: dict[str, str] = {}  # session id -> the hash of its corpus (``hold_corpus``)
_holders_lock = threading.Lock()


@functools.lru_cache(maxsize=1)
def _glibc():
    """The C library when it is glibc (whose mallopt and malloc_trim these calls mean), else None."""
    try:
        if not (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc"):
            return None
        libc = ctypes.CDLL(None)
    except (AttributeError, ValueError, OSError):  # no confstr (Windows), no such name, no libc
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


def limit_arenas(arenas: int = ARENAS) -> bool:
    """Cap glibc's malloc arenas, and serve every block of ``MMAP_THRESHOLD`` bytes or more (a
    corpus, its arrays) from a mapping of its own, returned whole when freed; whether both were set."""
    libc = _glibc()
    return bool(libc is not None and libc.mallopt(M_ARENA_MAX, arenas)
                and libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))


def collect_less_often() -> None:
    """A full collection stops every thread while it runs, long with a room of 300 sessions in one
    process.  A page run allocates tens of thousands of objects that live until its messages are
    sent; collected every 700 allocations (Python's default), most of them were found alive,
    promoted, and so brought the next full collection closer, each holding up every page run under
    way.  Collected every ``YOUNG_COLLECTION_EVERY`` allocations, most die young first, and full
    collections are rarer.  The garbage waits a little longer for its collection, so the room's
    peak RSS is higher (why: docs/benchmarks.md, "A room on Learn BPE")."""
    gc.set_threshold(YOUNG_COLLECTION_EVERY, 20, 10)


def trim() -> bool:
    """Give free heap pages back to the system; whether any were given."""
    libc = _glibc()
    return bool(libc is not None and libc.malloc_trim(0))


def _sessions():
    """Streamlit's session manager, its stored-session cache and its event loop, or None when
    no server runs (a test's AppTest) or this Streamlit keeps them elsewhere."""
    try:
        from streamlit.runtime import Runtime
        if not Runtime.exists():
            return None
        runtime = Runtime.instance()
        manager = runtime._session_mgr
        stored = manager._session_storage._cache
        loop = runtime._get_async_objs().eventloop
    except (AttributeError, RuntimeError):
        return None
    can_expire = callable(getattr(stored, "expire", None))
    can_list = callable(getattr(manager, "list_sessions", None))
    if not (can_expire and can_list):
        return None
    return manager, stored, loop


def session_count() -> int | None:
    """Sessions the server holds, connected or kept for a reconnect (None: not known)."""
    parts = _sessions()
    return None if parts is None else len(parts[0].list_sessions())


def close_expired_sessions(timeout: float = 30.0) -> int:
    """Close the disconnected sessions whose time to reconnect has passed; how many."""
    parts = _sessions()
    if parts is None:
        return 0
    _, stored, loop = parts
    done: concurrent.futures.Future = concurrent.futures.Future()

    def close() -> None:  # on the event loop, where Streamlit touches its session storage
        try:
            expired = stored.expire()
            for _, info in expired:
                info.session.shutdown()
            done.set_result(len(expired))
        except Exception as error:  # reported to the housekeeper, which keeps going
            done.set_exception(error)

    try:
        loop.call_soon_threadsafe(close)
    except RuntimeError:  # the event loop has closed: the server is stopping
        return 0
    return done.result(timeout)


def hold_corpus(digest: str) -> None:
    """Note that this script run's session has the corpus of hash ``digest``: once no session
    has it, what the shared caches keep for it goes (:func:`orphaned_corpora`)."""
    ctx = get_script_run_ctx()
    if ctx is not None:
        with _holders_lock:
            _holders[ctx.session_id] = digest


def orphaned_corpora() -> set[str]:
    """The corpora whose sessions have all ended (closed by :func:`close_expired_sessions`),
    forgetting those sessions.  A pasted corpus cannot be asked for again once its sessions end
    (nothing else holds its text), so its tokenizers and payloads are dead weight: a pasted text
    left many times its size in the caches (a tokenizer and a prefix view) for ``CACHE_IDLE_S``."""
    parts = _sessions()
    if parts is None:
        return set()
    live = {info.session.id for info in parts[0].list_sessions()}
    with _holders_lock:
        before = set(_holders.values())
        for session_id in [s for s in _holders if s not in live]:
            del _holders[session_id]
        return before - set(_holders.values())


def tidy(previous_sessions: int | None, collect: bool = True) -> tuple[int | None, bool]:
    """One round of housekeeping: the sessions held now, and whether sessions ended or cache
    entries went (memory to give back, at once when ``collect``)."""
    closed = close_expired_sessions()
    dropped = BoundedCache.drop_idle_everywhere() + BoundedCache.drop_orphans_everywhere(orphaned_corpora())
    sessions = session_count()
    ended = closed > 0 or (None not in (sessions, previous_sessions) and sessions < previous_sessions)
    if (ended or dropped) and collect:
        give_back()
    return sessions, bool(ended or dropped)


def give_back() -> None:
    """Collect the cycles a session's objects hold, and give the heap's free pages back."""
    gc.collect()
    trim()


def housekeeping_round(sessions: int | None, owed: bool, collected: float,
                       now: float) -> tuple[int | None, bool, float]:
    """One round of the housekeeper: :func:`tidy`, then :func:`give_back` when memory is owed and
    the last collection (at ``collected``) was ``COLLECT_EVERY_S`` ago or more.  Returns the next
    round's ``(sessions, owed, collected)``."""
    sessions, freed = tidy(sessions, collect=False)
    if (owed or freed) and now - collected >= COLLECT_EVERY_S:
        give_back()
        return sessions, False, now
    return sessions, owed or freed, collected


def _housekeep() -> None:
    sessions, owed, collected = session_count(), False, float("-inf")
    while True:
        time.sleep(PERIOD_S)
        try:
            sessions, owed, collected = housekeeping_round(sessions, owed, collected, time.monotonic())
        except Exception:  # never take the server down for housekeeping; try again next round
            _LOG.exception("memory housekeeping failed")
            sessions = None


def freeze_modules(package: str) -> None:
    """Import every module of ``package`` (the pages' views, and through them pandas, altair and the
    rest of the app; never torch, which a server does not load: ``core.gpt.machine``), then move
    every object alive to the collector's permanent generation (``gc.freeze``): a full collection
    walks every object it tracks, holding the GIL while every page run of the room waits, and the
    modules' objects, most of a server's and alive until it stops, need no walk.  Objects frozen are
    still freed when nothing refers to them; only a cycle among them is never collected: hence a
    collection first, and only while nothing of an attendee's is alive (:func:`nothing_of_anyone`)
    (why: docs/benchmarks.md, "A room that does not behave")."""
    views = importlib.import_module(package)
    for module in pkgutil.iter_modules(views.__path__, f"{package}."):
        importlib.import_module(module.name)
    gc.collect()
    gc.freeze()


def nothing_of_anyone() -> bool:
    """Whether this process holds one session at most, with no values yet: a fresh tab's first run,
    not a tab that comes back with its paste.  A process restarted under a room gets its tabs back
    at once, with their pastes; frozen with them, their sessions' cycles would never be collected,
    so such a process is left as it is."""
    sessions = session_count()
    return (sessions is None or sessions <= 1) and len(st.session_state) == 0


def start(app_package: str | None = None) -> None:
    """Cap the arenas, collect less often, freeze ``app_package``'s modules (:func:`freeze_modules`,
    on a fresh tab's first run) and start the housekeeper, once per process (a module reloaded by
    Streamlit's file watcher finds the running thread by its name)."""
    with _start_lock:
        if any(t.name == THREAD_NAME for t in threading.enumerate()):
            return
        limit_arenas()
        collect_less_often()
        if app_package is not None and nothing_of_anyone():
            freeze_modules(app_package)
        threading.Thread(target=_housekeep, name=THREAD_NAME, daemon=True).start()
