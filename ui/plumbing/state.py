"""Every session-state key the app reads or writes, and typed accessors for them: no other module
indexes ``st.session_state`` with a key of its own.

Naming: lowercase ``<area>_<name>``, the area being ``corpus``, ``learn``, ``charbpe`` (Char vs
BPE), ``tokenizers`` (Compare tokenizers), ``gpt`` (Train a GPT), ``lesson`` (Start here),
``owner`` or ``instructor``.  Streamlit forgets a widget's key on a page that does not draw it, and
every value an attendee gave a page outlives the visit to another: a box the server fills (from
the corpus, a sample, a station) has the key ``w_<name>`` and its value kept at ``kept_<name>``
(:func:`keep`); a choice left to the person keeps its key, and its value as last drawn at
``last_<key>`` (:func:`choice` draws it; a page that corrects the value first calls :func:`restore`
before drawing and :func:`remember` after).  Keys that only name a widget, never read here, follow
the same ``<area>_<name>`` style in their page.

- ``corpus() -> (name, text)``, ``corpus_digest()``, ``set_corpus(name, text)``: the shared corpus;
  ``follow_corpus(digest, boxes)``: boxes filled from it, refilled when it changes.
- ``tokenizer_settings(variant=None) -> TokenizerSettings``: the BPE pages' settings, the split
  pattern resolved here once.
- ``learn_step()`` / ``set_learn_step(k)``, ``learn_resets()``, ``reset_learn_step()``: where Learn
  BPE's step view opens.
- runs (``runs_dir_override``, ``selected_run``, ``suggest_run_name``, ``sync_bpc_runs``) and
  identity (``stored_owner``, ``is_instructor``, ...) for Train a GPT.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from core.bpe.variants import variant_rules

from core.digest import text_digest
from core.room import default_runs_dir
from core.samples import DEFAULT_SAMPLE, label, load_sample

# the shared corpus (``ui.plumbing.corpus_sidebar``)
CORPUS_NAME = "corpus_name"
CORPUS_TEXT = "corpus_text"
CORPUS_DIGEST = "corpus_digest"  # the corpus's hash ...
CORPUS_DIGEST_OF = "corpus_digest_of"  # ... and the text it is the hash of
CORPUS_SOURCE = "corpus_source"  # where the corpus came from, for the URL
TRAINING_SAMPLE = "training_sample"  # the CORPUS_SOURCE Train a GPT chose for a visitor (corpus_sidebar)
CORPUS_PASTE = "corpus_paste"  # the paste box's key is this and a count (``corpus_sidebar``)
CORPUS_PASTES = "corpus_pastes"  # ... of the times the server rewrote the box
CORPUS_SAMPLE = "corpus_sample"
CORPUS_PATH = "corpus_path"
CORPUS_ERROR = "corpus_error"
CORPUS_UPLOADS = "corpus_uploads"
CORPUS_REPLACEABLE = "corpus_replaceable"  # an upload refused as not UTF-8: its uploader key
URL_RESTORED = "url_restored"  # the URL's corpus and settings were read, once a session
STATE_READY = "state_ready"  # :func:`init_state` has filled in this session's defaults
# Learn BPE
LEARN_STEP = "learn_step"  # the step the page opens at (the browser steps from there)
LEARN_RESETS = "learn_resets"  # how many times the step was reset (a new corpus or new settings)
JOBS_RESETS = "jobs_resets"  # learn_resets when this session's jobs were asked (ui.plumbing.heavy_jobs)
LEARN_RUN_MS = "learn_run_ms"  # the server's time for the page's last run, read by bench/bench_app.py
# Tokenizer questions
QUESTIONS_BOXES_OF = "questions_boxes_of"  # the corpus (its hash) the sections' boxes were filled from
INSIGHTS_SWEEP_ASKED = "insights_sweep_asked"  # (corpus hash, sizes) of a sweep whose tokenizers train
# Char vs BPE
CHARBPE_TEST_EDITED = "charbpe_test_edited"  # the person typed their own test text
# Train a GPT
GPT_RUNS_DIR = "gpt_runs_dir"
GPT_SELECTED_RUN = "gpt_selected_run"
GPT_RUN_NAME = "gpt_run_name"  # kept (:func:`keep`), as the boxes of Tokenizer questions, Compare and Chat
GPT_SUGGESTED_NAME = "gpt_suggested_run_name"
GPT_BPC_RUNS = "gpt_bpc_runs"  # the runs on the bits-per-character chart
GPT_BPC_SEEN = "gpt_bpc_seen"  # the runs that chart has offered already
GPT_OPEN_RUNS = "gpt_open_runs"  # (owner, name) of the runs a station's button opens the page on
GPT_TOKENIZER = "gpt_tokenizer"
GPT_PROMPT = "gpt_prompt"
# Start here (``ui.views.lesson_view``)
LESSON_STATION = "lesson_station"  # the station shown, kept (the URL keeps it as ?station=)
LESSON_OPENING = "lesson_opening"  # the tool page the Open button set up, switched to next run
CORPUS_PUT_ASIDE = "corpus_put_aside"  # (name, source) of the attendee's own corpus a station replaced
# who is at this browser (``ui.plumbing.identity``)
OWNER_ID = "owner_id"
INSTRUCTOR_MODE = "instructor_mode"
INSTRUCTOR_KEY_INPUT = "instructor_key_input"
INSTRUCTOR_MESSAGE = "instructor_message"

PATTERNS = {"none": None, "gpt2": "gpt2", "gpt4": "gpt4", "custom": None}
MAX_MERGES = 5000  # the Merges box's maximum
# the URL keeps what a reload must restore: ?corpus=<source>, the settings below, ?step=, ?run=
CORPUS_PARAM = "corpus"
STEP_PARAM = "step"
RUN_PARAM = "run"
STATION_PARAM = "station"  # Start here's station
URL_SETTINGS = {  # URL name: kept name
    "variant": "variant",
    "merges": "num_merges",
    "split": "pattern_choice",
    "marker": "end_of_word",
    "regex": "custom_pattern",
    "start": "start",
}
FROM_SCRATCH = "chars"  # Learn BPE's "start from" choice for characters or bytes; else a real tokenizer
BPC_RUNS_AT_FIRST = 6  # runs on the comparison chart when the page opens (newest first)
KEPT_DEFAULTS = {  # the values kept by :func:`keep`, by name
    "variant": "char",
    "end_of_word": "</w>",
    "pattern_choice": "gpt2",
    "custom_pattern": r"\s+|\w+|[^\w\s]+",
    "num_merges": 10,
    "start": FROM_SCRATCH,
    "test_text": "the lowest newer wider tokens <b>hi</b> ünïcode 👋",
}


@dataclass(frozen=True)
class TokenizerSettings:
    """What the BPE pages train: ``end_of_word`` only for ``word``, ``pattern`` (``None``,
    ``"gpt2"``, ``"gpt4"`` or a regex) only for ``byte``."""

    variant: str
    num_merges: int
    end_of_word: str | None
    pattern: str | None


def init_state() -> None:
    """Load the default sample on first open and fill in the kept values' defaults, once a session
    (``STATE_READY`` says it was done: a page run asks several times, and each look-up in
    Streamlit's session state costs microseconds a room pays twenty times a second; filling the
    defaults in at every read of a kept value showed in py-spy's profile of the hostile room;
    why: docs/benchmarks.md, "A room that does not behave")."""
    ss = st.session_state
    if STATE_READY in ss:
        return
    if CORPUS_TEXT not in ss:
        set_corpus(label(DEFAULT_SAMPLE), load_sample(DEFAULT_SAMPLE), digest=sample_digest(DEFAULT_SAMPLE))
    for name, value in KEPT_DEFAULTS.items():
        ss.setdefault("kept_" + name, value)
    ss.setdefault(LEARN_STEP, 0)
    ss.setdefault(LEARN_RESETS, 0)
    ss[STATE_READY] = True


def fragment_run() -> bool:
    """Whether this run reruns fragments only (a progress bar's timer, a fragment's button), not the
    page.  A change a callback sees in such a run is an echo: no widget drawn outside a fragment
    changes by a person's hand then (a change there asks for a whole run), but the browser sends
    every widget with a fragment's rerun, as it holds it, which can be a value from before the
    server last set it (a sample box the server emptied when a paste was loaded)."""
    ctx = get_script_run_ctx()
    return bool(ctx is not None and ctx.fragment_ids_this_run)


def get(key: str, default=None):
    """The value at one of the keys above (a widget's, in a callback), or ``default``."""
    return st.session_state.get(key, default)


def put(key: str, value) -> None:
    st.session_state[key] = value


def relabel(key: str) -> None:
    """Before drawing the choice widget ``key`` whose option names change while it is shown: its
    value sent again, under the names it has now.  The browser holds a choice by its name, and sent
    back one no option had ("BPE (char, 300 merges)" after a paste made it 200), which chose
    nothing.  (An option that is the same thing whatever it is trained on is named so it never
    changes: ``ui.plumbing.controls.OWN_CHOICE``.)"""
    if key in st.session_state:
        st.session_state[key] = st.session_state[key]


# -- the corpus ------------------------------------------------------------------------------------
def default_merges(text: str) -> int:
    """Enough merges to see words form, without long training on a big corpus."""
    n = len(text)
    if n < 200:
        return 10 if n > 30 else 5
    if n < 5_000:
        return 50
    return 200 if n < 50_000 else 300


@functools.lru_cache(maxsize=None)  # bounded, as ``load_sample`` is
def sample_digest(name: str) -> str:
    """A built-in sample's hash, once per process: its text is shared (``core.samples.load_sample``)."""
    return text_digest(load_sample(name))


def set_corpus(name: str, text: str, source: str | None = None, digest: str | None = None) -> None:
    """Make ``text`` the shared corpus; the step resets and merges get a default that fits.
    ``source`` (see ``ui.plumbing.corpus_sidebar``) is what the URL keeps so that a reload finds it
    again; ``digest``, the text's hash where it is known already (a sample's)."""
    ss = st.session_state
    ss[CORPUS_NAME] = name
    ss[CORPUS_TEXT] = text
    ss[CORPUS_SOURCE] = source
    ss[CORPUS_DIGEST] = digest or text_digest(text)
    ss[CORPUS_DIGEST_OF] = text
    ss["kept_num_merges"] = default_merges(text)
    reset_learn_step()


def corpus() -> tuple[str, str]:
    init_state()
    return st.session_state[CORPUS_NAME], st.session_state[CORPUS_TEXT]


def corpus_digest() -> str:
    """The corpus's hash, computed once when it was loaded (a test may set the text alone)."""
    ss = st.session_state
    text = corpus()[1]
    if ss.get(CORPUS_DIGEST_OF) is not text:
        ss[CORPUS_DIGEST] = text_digest(text)
        ss[CORPUS_DIGEST_OF] = text
    return ss[CORPUS_DIGEST]


def follow_corpus(digest: str, boxes: dict[str, object]) -> None:
    """Fill the boxes ``boxes`` names (drawn with :func:`keep`; name -> value taken from the corpus
    ``digest``) when the corpus changed since they were filled: what an attendee typed into such a
    box is theirs, on this page and back from another, until the corpus changes, and never
    outlives it."""
    changed = st.session_state.get(QUESTIONS_BOXES_OF) != digest
    for name, value in boxes.items():
        if changed or kept(name) is None:
            put_kept(name, value)
    st.session_state[QUESTIONS_BOXES_OF] = digest


# -- values kept across pages ----------------------------------------------------------------------
def kept(name: str):
    init_state()  # a session's first read fills in every default at once; later ones return at once
    return st.session_state.get("kept_" + name, KEPT_DEFAULTS.get(name))


def keep(name: str, on_change=None, max_chars: int | None = None, default=None) -> dict:
    """Keyword arguments for a widget whose value survives page switches: its key is
    ``w_<name>``, filled from ``kept_<name>`` (``default`` until something is kept), which each
    change copies back (cut to ``max_chars``) before ``on_change`` runs.  Such a widget is drawn
    outside fragments: a change in a fragment's run is an echo (:func:`fragment_run`)."""
    value = kept(name)
    if value is None and default is not None:
        value = st.session_state["kept_" + name] = default
    st.session_state["w_" + name] = value[:max_chars] if max_chars else value

    def copy() -> None:
        if fragment_run():  # the box as the browser held it before the server set it: keep the server's
            st.session_state["w_" + name] = kept(name)
            return
        value = st.session_state["w_" + name]
        st.session_state["kept_" + name] = value[:max_chars] if max_chars else value
        if on_change is not None:
            on_change()

    return {"key": "w_" + name, "on_change": copy}


def put_kept(name: str, value) -> None:
    """Set the value :func:`keep`'s widget for ``name`` shows at its next drawing."""
    st.session_state["kept_" + name] = value


def forget_kept(*names: str) -> None:
    """Drop the kept values of widgets that are gone for good (a removed message)."""
    for name in names:  # the widget's own key goes at the end of the first run that does not draw it
        st.session_state.pop("kept_" + name, None)


def choice(widget, *args, key: str, allowed=None, **kwargs):
    """``widget(*args, key=key, **kwargs)``'s value, for a choice left to the person: what they
    chose comes back after a visit to another page while it is still ``allowed`` (:func:`restore`,
    :func:`remember`).  A page that corrects a restored value before drawing calls those two itself."""
    if _restored(key, allowed):  # the widget's default is moot (and Streamlit would warn of both)
        kwargs.pop("index", None)
        kwargs.pop("value", None)
    return remember(key, widget(*args, key=key, **kwargs))


def restore(key: str, options=None) -> str:
    """Before drawing the widget ``key``: its value as last drawn (:func:`remember`), when Streamlit
    forgot it on another page and it is still among ``options`` (all of them for a list; ``None``:
    any); returns ``key``.  For the choices the server leaves to the person, or sets itself on the
    same run, in a fragment or not (:func:`keep`, for a box the server fills, takes a change in a
    fragment's run for an echo)."""
    _restored(key, options)
    return key


def _restored(key: str, options=None) -> bool:
    """:func:`restore`; whether it set the widget's value."""
    ss = st.session_state
    last = ss.get("last_" + key)
    if key not in ss and last is not None:
        allowed = options is None or all(v in options for v in (last if isinstance(last, list) else [last]))
        if allowed:
            ss[key] = last
            return True
    return False


def remember(key: str, value):
    """After drawing the widget ``key``: its ``value``, for :func:`restore`; returns ``value``."""
    st.session_state["last_" + key] = value
    return value


# the area of the session-state names a page keeps of its own (its kept boxes, and keys of its own)
PAGE_AREAS = {"chat": ("chat_",), "insights": ("questions_", "insights_"),
              "compare_tokenizers": ("tokenizers_",)}


def forget_page(page: str) -> None:
    """Forget what ``page`` (``app_pages/<page>.py``) kept of its own, so that it opens as on a first
    visit: a station of Start here opens its tool so, the figures it quotes on the screen."""
    areas = PAGE_AREAS.get(page, ())
    names = tuple(f"{kind}{area}" for area in areas for kind in ("", "kept_", "last_"))
    for key in [k for k in st.session_state if names and k.startswith(names)]:
        del st.session_state[key]


def tokenizer_settings(variant: str | None = None) -> TokenizerSettings:
    """The chosen settings, or those another ``variant`` gets with the same regex and marker (the
    default marker when the box is empty: only the chosen variant reports an empty one)."""
    rules = variant_rules(variant or kept("variant"))
    choice = kept("pattern_choice")
    pattern = kept("custom_pattern") if choice == "custom" else PATTERNS[choice]
    marker = kept("end_of_word") if variant is None else kept("end_of_word") or KEPT_DEFAULTS["end_of_word"]
    return TokenizerSettings(rules.name, int(kept("num_merges")), rules.end_of_word(marker),
                             rules.split_pattern(pattern))


# -- where Learn BPE's step view opens ---------------------------------------------------------------
def learn_step() -> int:
    """The step Learn BPE opens at: ``?step=`` when the session opened, or 0 after a reset.  The
    browser steps from there (``ui.views.step_view``) and keeps the URL's ``?step=`` itself."""
    return int(st.session_state.get(LEARN_STEP, 0))


def set_learn_step(k: int) -> None:
    st.session_state[LEARN_STEP] = k


def learn_resets() -> int:
    """Changes when the step is reset, so the browser drops the step it shows for the new one."""
    return int(st.session_state.get(LEARN_RESETS, 0))


def reset_learn_step() -> None:
    """Back to merge 0: the corpus or a setting changed."""
    set_learn_step(0)
    st.session_state[LEARN_RESETS] = learn_resets() + 1


# -- the token a visitor clicked (ui.views.token_view) ---------------------------------------------------
def last_click(view: str) -> tuple[str, int] | None:
    """``(tokenizer, id)`` last clicked in the token text ``view`` ("learn", "charbpe",
    "tokenizers"), or ``None``."""
    return st.session_state.get(f"{view}_clicked_token")


def set_last_click(view: str, clicked: tuple[str, int] | None) -> None:
    st.session_state[f"{view}_clicked_token"] = clicked


# -- the URL: what a reload restores ------------------------------------------------------------------
def opening_params() -> dict | None:
    """The URL's parameters on the session's first run (before anything rewrote them), else
    ``None``: what ``ui.plumbing.frame`` restores from, once."""
    if st.session_state.get(URL_RESTORED):
        return None
    st.session_state[URL_RESTORED] = True
    return st.query_params.to_dict()


def url_put(name: str, value) -> None:
    """Write ``?name=value`` into the page URL (``None`` removes it), only when it changed."""
    params = st.query_params
    text = None if value is None else str(value)
    if params.get(name) == text:
        return
    if text is None:
        del params[name]
    else:
        params[name] = text


# -- runs -------------------------------------------------------------------------------------------
def runs_dir_override() -> Path | None:
    """A runs folder set for this session (tests set it), else ``None``."""
    folder = st.session_state.get(GPT_RUNS_DIR)
    return Path(folder) if folder else None


def selected_run() -> str | None:
    return st.session_state.get(GPT_SELECTED_RUN)


def select_run(label: str) -> None:
    st.session_state[GPT_SELECTED_RUN] = label
    url_put(RUN_PARAM, label)


def suggest_run_name(name: str) -> None:
    """Put ``name`` in the run-name box unless the person typed a name of their own there, so a
    BPE run is not launched as "char-tiny" after the tokenizer was switched."""
    if kept(GPT_RUN_NAME) in (None, st.session_state.get(GPT_SUGGESTED_NAME)):
        put_kept(GPT_RUN_NAME, name)
    st.session_state[GPT_SUGGESTED_NAME] = name


def sync_bpc_runs(names: list[str], first: list[str]) -> None:
    """Keep the comparison's selection in step with the runs folder: it opens on ``first`` (the
    attendee's own runs and the room's), a run launched later (here or elsewhere) joins the chart,
    a deleted one leaves it, and runs the person removed stay out."""
    ss = st.session_state
    restore(GPT_BPC_RUNS)  # as before a visit to another page (the runs gone are dropped below)
    if GPT_BPC_RUNS not in ss:
        ss[GPT_BPC_RUNS] = first[:BPC_RUNS_AT_FIRST]
    else:
        seen = ss.get(GPT_BPC_SEEN, set())
        ss[GPT_BPC_RUNS] = [n for n in ss[GPT_BPC_RUNS] if n in names] + [n for n in first if n not in seen]
    ss[GPT_BPC_SEEN] = set(names)


def open_runs(labels: dict[str, tuple[str, str]]) -> None:
    """Apply a station's button (``GPT_OPEN_RUNS``, set by ``ui.views.lesson_view``): the picker on
    its last run and the comparison on its runs alone; ``labels``: label -> (owner, name) of the
    runs listed."""
    wanted = st.session_state.pop(GPT_OPEN_RUNS, None)
    if not wanted:
        return
    wanted = {tuple(key) for key in wanted}
    chosen = [label for label, key in labels.items() if tuple(key) in wanted]
    if chosen:
        select_run(chosen[-1])
        st.session_state[GPT_BPC_RUNS] = chosen
        st.session_state[GPT_BPC_SEEN] = set(labels)


# -- identity ---------------------------------------------------------------------------------------
def stored_owner() -> str | None:
    return st.session_state.get(OWNER_ID)


def set_owner(owner: str) -> None:
    st.session_state[OWNER_ID] = owner


def is_instructor() -> bool:
    return bool(st.session_state.get(INSTRUCTOR_MODE))


def set_instructor(on: bool, message: str | None = None) -> None:
    st.session_state[INSTRUCTOR_MODE] = on
    st.session_state[INSTRUCTOR_MESSAGE] = message


def instructor_message() -> str | None:
    return st.session_state.get(INSTRUCTOR_MESSAGE)


def take_instructor_key() -> str:
    """What was typed in the instructor-key box, emptied at once: the key never stays there."""
    entered = st.session_state.get(INSTRUCTOR_KEY_INPUT, "")
    st.session_state[INSTRUCTOR_KEY_INPUT] = ""
    return entered


def runs_dir() -> Path:
    """Where runs live: the session's folder if one was set (:func:`runs_dir_override`), else
    ``core.room``'s default."""
    return runs_dir_override() or Path(default_runs_dir())
