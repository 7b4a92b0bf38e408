"""The Start here page's Streamlit half: the path of stations with what this attendee has done, a
station (its text, the prediction, the feedback, the button that opens its tool already set up),
and the instructor's live view of the room.  Everything it decides is ``core.lessons``'s: the
station files, the computed answers, the verdicts, the progress files and the room's counts.

- ``lesson_path()``: the stations, read once per change of their files; a file with a mistake
  becomes a message naming it (also logged once for the person running the server).
- ``station_answer(station)``: what ``core`` computes, cached per station file (not for a live
  answer such as the room's GPT runs); ``words(station)``: its text, question and directions with
  the facts about its tool they quote (``core.lessons.words``), cached the same way.
- ``path_picker``, ``show_station``, ``room_view``: the page's three parts.
"""

from __future__ import annotations

import logging
import time
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from core.corpus import CorpusError
from core.lessons import (Answer, AnswerNotReady, Given, LessonError, LessonPath, ProgressStore, Station,
                          StationProgress, answer_station, compute_answer, default_lessons_dir, explanation,
                          hint, load_path, progress_line, read_given, room_runs, start_room_runs)
from core.lessons.content import PATH_FILE, station_files
from core.lessons.room_runs import run_paths
from core.lessons.words import Words, station_facts, station_words

from ui.plumbing import state
from ui.plumbing.cache import server_settings
from ui.plumbing.controls import restore_settings
from ui.plumbing.corpus_sidebar import own_corpus, put_aside_own_corpus, restore_corpus, source_label
from ui.plumbing.identity import owner_id, viewer
from ui.plumbing.render import md_safe, show_error
from ui.plumbing.state import runs_dir

LOG = logging.getLogger("bpe_explorer.lessons")
ROOM_EVERY_S = 5  # the room view's refresh
COMPUTE_ERRORS = (LessonError, CorpusError, OSError, ImportError)  # a station that cannot be answered


# -- the stations and their answers ---------------------------------------------------------------
@st.cache_resource(max_entries=4, show_spinner=False)
def _loaded(folder: str, signature: tuple) -> LessonPath:
    path = load_path(folder)
    for problem in path.problems:  # once per change of the files, for the server's console
        LOG.error("Start here: %s", problem)
    return path


def lesson_path() -> LessonPath:
    """The path as its files are now: an edited station shows at the next rerun."""
    folder = default_lessons_dir()
    files = [*station_files(folder), folder / PATH_FILE]
    signature = tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in files if p.is_file())
    return _loaded(str(folder), signature)


@st.cache_data(max_entries=64, show_spinner=False)
def _cached_answer(station_id: str, digest: str, _station: Station) -> Answer:
    return compute_answer(_station)


def station_answer(station: Station) -> Answer:
    """What ``core`` computes for the station (may raise ``AnswerNotReady`` or ``LessonError``)."""
    if station.question.computation.live:
        return compute_answer(station, runs_dir())
    with st.spinner("Computing the answer with core (the first time takes a few seconds)…"):
        return _cached_answer(station.id, station.digest, station)


@st.cache_data(max_entries=64, show_spinner=False)
def _cached_facts(station_id: str, digest: str, _station: Station) -> dict[str, str]:
    return station_facts(_station)


def words(station: Station) -> Words:
    """The station's words as the attendee reads them before answering, with the facts about its
    tool filled (Markdown in them escaped); may raise ``LessonError``."""
    with st.spinner("Computing what the tool shows with core (the first time takes a few seconds)…"):
        facts = _cached_facts(station.id, station.digest, station)
    return station_words(station, facts, md_safe)


def store() -> ProgressStore:
    return ProgressStore(runs_dir())


def my_progress() -> dict[str, StationProgress]:
    return store().of(owner_id())


# -- the path --------------------------------------------------------------------------------------
def show_problems(path: LessonPath) -> None:
    for problem in path.problems:
        st.error(f"A station file has a mistake, so it is left out (tell the instructor): "
                 f"{md_safe(str(problem))}", icon="⚠️")


def path_picker(path: LessonPath, progress: dict[str, StationProgress]) -> Station:
    """The stations as a row of pills (✓ for the done ones); returns the chosen one.  The choice is
    kept in the URL (``?station=``, read when the session opens); a first visit opens the first
    station not done."""
    ids = [s.id for s in path.stations]
    if state.kept(state.LESSON_STATION) not in ids:
        wanted = st.query_params.get(state.STATION_PARAM)
        state.put_kept(state.LESSON_STATION, wanted if wanted in ids else
                       next((i for i in ids if not _done(progress, i)), ids[0]))
    done = sum(_done(progress, i) for i in ids)
    st.progress(done / len(ids), text=f"{done} of {len(ids)} stations done")

    def label(station_id: str) -> str:
        s = path.station(station_id)
        return f"{'✓' if _done(progress, station_id) else s.number} · {s.short}"
    chosen = st.pills("Your path (any order)", ids, format_func=label, required=True,
                      **state.keep(state.LESSON_STATION))
    state.url_put(state.STATION_PARAM, chosen)
    return path.station(chosen) or path.stations[0]


def _done(progress: dict[str, StationProgress], station_id: str) -> bool:
    return station_id in progress and progress[station_id].done


# -- one station -----------------------------------------------------------------------------------
def show_station(path: LessonPath, station: Station, everything: dict[str, StationProgress]) -> None:
    """The station in its box; ``everything``: this attendee's progress at every station."""
    store().open_station(owner_id(), station.id)
    progress = everything.get(station.id, StationProgress())
    q = station.question
    with st.container(border=True, key="lesson_station_box"):
        st.subheader(f"{station.number}. {station.title}")
        try:
            said = words(station)
        except COMPUTE_ERRORS as exc:
            show_error(exc, "This station's text could not be computed: ")
            return
        st.markdown(said.text)
        if q.compute == "room_bpc":
            room_runs_status(station)
        st.markdown(f"**Predict first.** {said.ask}")
        if not progress.done:
            prediction(station)
        feedback(station, progress)
        st.markdown(f"**Then see it.** {said.do}")
        tool_button(station, said.label)
        if progress.done:
            next_station(path, station, everything)


def prediction(station: Station) -> None:
    """The answer box and the Check button (a live answer not ready yet says why and waits)."""
    q, key = station.question, f"lesson_answer_{station.id}"
    if q.computation.kind == "choice":
        given = st.radio("Your prediction", list(q.choices), format_func=q.choices.get, index=None, key=key)
    else:
        integer = q.computation.integer
        given = st.number_input(f"Your prediction ({q.unit})" if q.unit else "Your prediction", value=None,
                                min_value=0 if integer else None, step=1 if integer else 0.1,
                                format="%d" if integer else "%.2f", key=key, placeholder="a number")
    if st.button("Check my prediction", key=f"lesson_check_{station.id}", type="primary",
                 disabled=given is None):
        check(station, given)


def check(station: Station, given) -> None:
    try:
        read_given(station, given)  # a number out of bounds is the attendee's to fix, not the station's
    except LessonError as exc:
        st.warning(md_safe(str(exc)), icon="✍️")
        return
    try:
        answer = station_answer(station)
        answer_station(store(), owner_id(), station, given, answer)
    except AnswerNotReady as exc:
        st.info(md_safe(str(exc)), icon="⏳")
        return
    except COMPUTE_ERRORS as exc:
        show_error(exc, "This station's answer could not be computed: ")
        return
    st.rerun()  # the feedback is drawn from the progress just recorded


def feedback(station: Station, progress: StationProgress) -> None:
    """What the last answer earned: why it is right, or a hint and a way to see the answer."""
    if progress.last is None:
        return
    try:
        answer = station_answer(station)
    except COMPUTE_ERRORS as exc:  # e.g. the room's runs deleted after the station was done
        st.caption(f"({md_safe(str(exc))})")
        answer = None
    q = station.question
    if progress.done:
        first = " at the first try" if progress.first_try_right else ""
        seen = ", once you had seen the answer" if progress.revealed else ""  # offered after a wrong one
        why = explanation(station, answer, md_safe) if answer else ""
        st.success(f"**Right{first}{seen}.** {why}", icon="✅")
        return
    given_text, _ = progress.last
    try:
        given = read_given(station, given_text if q.choices else given_text.replace(",", ""))
    except LessonError:  # the station file changed since: its choices no longer hold this answer
        given, answer = Given(given_text), None
    said = md_safe(q.choices.get(given.text, given.text))
    more = hint(station, answer, given, md_safe) if answer else ""
    st.error(f"**Not quite:** you predicted {said}. {more}", icon="🤔")
    if answer is not None and progress.revealed:
        st.info(explanation(station, answer, md_safe), icon="💡")
    elif answer is not None and st.button("Show me the answer", key=f"lesson_reveal_{station.id}"):
        store().reveal(owner_id(), station.id)  # kept: the room view counts who asked to see it
        st.rerun()


def tool_button(station: Station, label: str) -> None:
    """Open the tool's page set up as the station's URL would set it up (same tab, same session),
    or, by the link, in a new tab; said beforehand: which corpus it opens on, and how an
    attendee's own text comes back when a station needs a sample instead."""
    tool = station.tool
    own, needed = own_corpus(), tool.params.get(state.CORPUS_PARAM)
    if tool.any_text:
        needed = None
    if own is not None and needed:
        st.caption(f"It opens on {md_safe(source_label(needed))}, which this station is about: your "
                   f"text ({md_safe(own[0])}) is put aside, and *↩ Back to your text* in the sidebar "
                   f"brings it back.")
    elif own is not None:
        st.caption(f"It opens on your text ({md_safe(own[0])}).")
    st.button(f"{label} ▶", key=f"lesson_open_{station.id}", on_click=set_up_tool, args=(station,))
    params = {**tool.params, **({state.CORPUS_PARAM: own[1]} if tool.any_text and own else {})}
    link = f"{tool.page}?{urlencode({**params, 'u': owner_id()})}"
    st.caption(f"[Or open it in a new tab]({link}), to keep this station in view.")


def set_up_tool(station: Station) -> None:
    """The Open button's callback (before any widget is drawn): load the station's corpus and
    settings into this session exactly as the page's URL does for a new one (settings the station
    leaves out go back to their defaults); :func:`follow_tool` then switches page."""
    for name in state.URL_SETTINGS.values():
        state.put_kept(name, state.KEPT_DEFAULTS[name])
    state.forget_page(station.tool.page)  # its own boxes too: what the station says is on the screen
    if not (station.tool.any_text and own_corpus() is not None):  # else the attendee's text stays
        if station.tool.params.get(state.CORPUS_PARAM):
            put_aside_own_corpus()
        restore_corpus(station.tool.params)
    restore_settings(station.tool.params)
    if station.question.compute == "room_bpc":  # open on the station's runs, not the newest
        paths = run_paths(station.data(runs_dir()))
        state.put(state.GPT_OPEN_RUNS, [(path.parent.name, path.name) for path in paths.values()])
    state.put(state.LESSON_OPENING, station.tool.page)


def follow_tool() -> None:
    """Switch to the page the Open button set up (a callback cannot switch pages itself)."""
    page = state.get(state.LESSON_OPENING)
    if page:
        state.put(state.LESSON_OPENING, None)
        st.switch_page(f"app_pages/{page}.py")


def next_station(path: LessonPath, station: Station, everything: dict[str, StationProgress]) -> None:
    """A button to the next station not done (after this one, then from the start); none at the end."""
    order = [s for s in path.stations if s.number > station.number] + list(path.stations)
    todo = [s for s in order if s.id != station.id and not _done(everything, s.id)]
    if todo:
        st.button(f"Next: {todo[0].number}. {todo[0].title} ▶", key=f"lesson_next_{station.id}",
                  on_click=state.put_kept, args=(state.LESSON_STATION, todo[0].id))
    else:
        st.success("You have done every station of the path. 🎉")


# -- the room's GPT runs (the char vs BPE station) ----------------------------------------------------
def room_runs_status(station: Station) -> None:
    """Where the room's two runs are, refreshed while they train; a button to start them when they
    are missing (anyone may: they are trained once for the whole room)."""
    data = station.data(runs_dir())
    runs = room_runs(data)
    if any(run is None for run in runs.values()):
        st.caption("The room's two models are not trained yet. Start them once for everyone: they train "
                   "in the background, a few minutes on a laptop.")
        if st.button("Train the room's two models", key="lesson_start_runs"):
            try:
                with st.spinner("Preparing the runs (training the BPE tokenizer)…"):
                    start_room_runs(data, server_settings())
            except (ValueError, OSError, CorpusError) as exc:
                show_error(exc, "The room's models could not be started: ")
                return
            st.rerun()
        return

    @st.fragment(run_every=ROOM_EVERY_S if any(run.active for run in runs.values()) else None)
    def status() -> None:
        st.caption(f"The room's models: {md_safe(progress_line(room_runs(data)))}.")
    status()


# -- the instructor's view of the room ---------------------------------------------------------------
def room_view(path: LessonPath) -> None:
    st.subheader("The room")
    st.caption("Only you see this (instructor mode): how far the attendees are, each counted once per "
               f"station (you too, if you follow the path below); updated every {ROOM_EVERY_S} seconds.")
    _room_table(path)


@st.fragment(run_every=ROOM_EVERY_S)
def _room_table(path: LessonPath) -> None:
    rows = []
    for station, row in zip(path.stations, store().room(viewer(), [s.id for s in path.stations])):
        share = (f"{row.first_try_right} of {row.answered} ({row.first_try_share:.0%})" if row.answered
                 else "–")
        wrong = station.question.choices.get(row.common_wrong, row.common_wrong)
        wrong = md_safe(f"{wrong} ({row.common_wrong_count})") if wrong else "–"
        rows.append({"station": md_safe(f"{station.number}. {station.short}"), "reached": row.reached,
                     "answered": row.answered, "right at first try": share,
                     "saw the answer": row.revealed, "done": row.done,
                     "most common wrong answer": wrong})
    # a plain table (readable at 800 px, its text in the page); it draws cells as Markdown
    st.table(pd.DataFrame(rows), hide_index=True)
    st.caption(f"As of {time.strftime('%H:%M:%S')}.")
