"""The room's heavy work, seen from a page: where its jobs go (the runs folder's engine,
``core.room.engine``, reached through ``core.room.engine_link``; a Dask cluster where one is
configured) and what a page shows while a job of its session runs.

:func:`job_result` gives the result of ``fn(*args)`` computed by a job worker process for this
session (a job shared with every session that asks for the same key).  Until it is done, the page
draws a progress bar in a fragment that polls the job every ``POLL_S`` seconds and reruns the page
once the job ends, and the page stops there (``st.stop``): the server's thread is free at once,
and the attendee's other widgets keep answering.  A job a bound stopped raises
:class:`TooHeavyError`, whose message says what happened and what to do.  Callers run small work
inline instead (``core.room.jobs.INLINE_BELOW``), so a calm room never comes here; :func:`computed`
is that choice made once, for what a page computes from its corpus.

A session's jobs are cancelled when its corpus or settings change (:func:`cancel_stale`, at the
top of each page run: a dict lookup) or when nobody polled them for ``ABANDON_S`` seconds (the
tab closed, or went to a page that does not need them).
"""

from __future__ import annotations

import os
import threading
import time

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from core.room import default_runs_dir
from core.room.dask_jobs import SCHEDULER_ENV, DaskJobs
from core.room.engine_link import RemoteEngine
from core.room.jobs import INLINE_BELOW, Jobs, JobState, JobStopped
from core.settings import ServerSettings

from ui.plumbing import state
from ui.serving import page_queue
from ui.serving.bounded_cache import BoundedCache

POLL_S = 0.5
ABANDON_S = 30.0
# A job worker's own memory (Python, numba's kernels, the corpus it was sent) on top of what one
# training may take (the server's ``max_train_memory``, refused up front by ``core.bpe``'s estimate):
# a job worker above both is killed.
WORKER_BASE_BYTES = 512 * 2**20
# what the job workers run, imported once
PRELOAD = ("core.room.tokenizer_jobs", "core.insights.question_jobs", "core.bpe.step_data")
_interface: list[Jobs] = []  # where this process's jobs go, linked at the first heavy job
_making = threading.Lock()


class TooHeavyError(RuntimeError):
    """Work the server stopped at one of its bounds (time, memory); the message says which, and
    what to do instead."""


def training_advice(variant: str) -> str:
    """What to do when training ``variant`` hit a bound: the byte variant, split by GPT-2's
    pattern, trains a large text faster than the char variant (why: docs/benchmarks.md, "Texts
    that tie")."""
    if variant == "byte":
        return "Ask for fewer merges, or use a smaller text."
    return "Ask for fewer merges, use a smaller text, or pick the byte variant."


def jobs_interface(settings: ServerSettings) -> Jobs:
    """Where this process's jobs go, through the one interface, sized and bounded by the first
    ``settings`` it sees: a Dask cluster where one is configured (``core.room.dask_jobs``: a room on
    several machines), else the server's runs folder's engine, which every app process of the
    machine shares (started on demand)."""
    with _making:
        if not _interface:
            _interface.append(_made(settings))
        return _interface[0]


def _made(settings: ServerSettings) -> Jobs:
    address = os.environ.get(SCHEDULER_ENV)
    if not address:
        return RemoteEngine(default_runs_dir(), job_workers=settings.job_workers, limit_s=settings.job_time_s,
                            max_rss=settings.max_train_memory + WORKER_BASE_BYTES, abandon_s=ABANDON_S,
                            preload=PRELOAD, waiting=page_queue.step_aside)
    try:
        return DaskJobs(address, limit_s=settings.job_time_s)
    except (OSError, TimeoutError) as exc:  # asked again at the next heavy job
        raise TooHeavyError(f"The room's Dask cluster did not answer ({exc}); ask the person "
                            "running the server.") from None


def job_result(settings: ServerSettings, key, fn, args: tuple, doing: str, unit: str = "",
               block: bool = True, advice: str = "Use a smaller text."):
    """``fn(*args)`` from a job worker, or, while it runs, a progress bar reading "``doing``: done /
    total``unit``" and then ``st.stop()`` (``block``) or ``None``.  Every caller keeps the result in
    a cache of its own, so the job is forgotten once every session that asked has read it.  Raises
    what ``fn`` raised, or :class:`TooHeavyError` ("``doing`` was stopped: why. ``advice``")."""
    jobs, session = jobs_interface(settings), _session()
    try:
        job = jobs.submit(session, key, fn, args, owner=state.stored_owner())
    except JobStopped as exc:  # the engine (or Dask) did not answer
        raise TooHeavyError(f"{doing} could not start: {exc}") from None
    state.put(state.JOBS_RESETS, state.learn_resets())
    if not job.done:
        _progress(key, doing, unit)
        if block:
            st.stop()
        return None
    try:
        value = job.result()
    except JobStopped as exc:
        raise TooHeavyError(f"{doing} was stopped: {exc} {advice}") from None
    jobs.forget(key, session)
    return value


def computed(settings: ServerSettings, cache: BoundedCache, key: tuple, fn, args: tuple, size: int,
             doing: str, unit: str = "", sent: tuple | None = None, advice: str = "Use a smaller text.",
             inline_below: int = INLINE_BELOW):
    """``fn(*args)`` once for the room, kept in ``cache`` under ``key`` (a job's key too, the same
    in every app process): computed on the page's thread when ``size`` (the characters it reads)
    is below ``inline_below`` (lower for work dearer per character), else by a job worker, given
    ``sent`` in place of ``args`` where they differ (a real tokenizer by its name), and ``None``
    until then, with a progress bar reading ``doing`` where the caller would have drawn it.  The
    one way a page computes what grows with its corpus (``tests/app/test_page_thread.py`` holds
    every page to it)."""
    found = cache.get(key)
    if found is not None:
        return found
    if size < inline_below:
        found = fn(*args)
    else:
        found = job_result(settings, key, fn, args if sent is None else sent, doing, unit, block=False,
                           advice=advice)
        if found is None:
            return None
    cache.put(key, found)
    return found


def cancel_stale() -> None:
    """Cancel this session's jobs if its corpus or settings changed since it asked for them."""
    asked = state.get(state.JOBS_RESETS)
    if asked is not None and asked != state.learn_resets():
        state.put(state.JOBS_RESETS, None)
        try:
            if _interface:
                _interface[0].cancel(_session())
        except JobStopped:  # the engine restarting: its jobs went with it
            pass


@st.fragment(run_every=POLL_S)
def _progress(key, doing: str, unit: str) -> None:
    """The job's progress, redrawn every ``POLL_S`` seconds; the whole page reruns once it ends."""
    try:
        job = _interface[0].job(key) if _interface else None
    except JobStopped:  # the engine restarting: the page asks again
        job = None
    # a rerun only from the bar's own timer: in the page's run that drew it, a rerun would end that run
    # before the bar was drawn, and a page that asks the engine over a socket often finds its job done
    # a moment after it asked (it is shown at the next poll)
    if (job is None or job.done) and state.fragment_run():
        st.rerun()
    if job is None or job.done:
        st.progress(1.0, text=f"{doing}: finishing…")
        return
    done, total = job.progress
    waited = f" ({time.monotonic() - job.submitted:.0f} s)"
    if job.state is JobState.QUEUED:
        st.progress(0.0, text=f"{doing}: waiting for a free job worker…{waited}")
    elif total:
        st.progress(min(done / total, 1.0), text=f"{doing}: {done:,} / {total:,}{unit}{waited}")
    else:
        st.progress(0.0, text=f"{doing}: starting…{waited}")


def _session() -> str:
    """This attendee's tab, the job engine's session: whose jobs a change cancels (the share a job
    counts in is its owner's)."""
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "no session"
