"""Streamlit helpers for the "Train a GPT" page: the runs folder, the device and its bounds, the
step-time probe, run labels and queue lines, and the altair charts.  Training itself is
``core.gpt.loop``; processes, permissions and the queue are ``core.room.runs``.  No model runs in
the server process: the estimate is timed by ``core.room.probe`` in a child process."""

from __future__ import annotations

import hashlib
import math
from dataclasses import replace
from pathlib import Path

import altair as alt
import pandas as pd
import streamlit as st

from core.digest import text_digest
from core.gpt.split import DataTooShortError, check_length
from core.room.limits import (ModelLimits, cpu_cores, default_max_running, detect_device, limits_for,
                               this_machine, threads_per_run, training_memory)
from core.room.probe import ProbeError, StepEstimate, estimate_step
from core.bpe import TokenizerFileError, load_tokenizer
from core.runfolder.layout import CORPUS_FILE, TOKENIZER_FILE, queue_settings
from core.room.queries import queue_state
from core.runfolder.status import RunStatus
from core.room.runs import ROOM_OWNER, RunInfo, Viewer, read_metrics

from ui.plumbing import state
from ui.plumbing.charts import FIT_WIDTH, whole_axis
from ui.plumbing.render import plural

STEP_AXIS = whole_axis()  # steps are whole numbers, even with one point


@st.cache_resource(max_entries=8, show_spinner=False)
def _run_tokenizer(path: str, mtime: float):
    return load_tokenizer(path)


def unseen_in_prompt(run_path, prompt: str) -> list[str]:
    """The characters of ``prompt`` the run's tokenizer never saw, each once (a byte tokenizer
    sees every character; the word variant drops whitespace rather than encoding it)."""
    path = Path(run_path) / TOKENIZER_FILE
    try:
        tok = _run_tokenizer(str(path), path.stat().st_mtime)
    except (OSError, TokenizerFileError):
        return []  # the helper process reports a broken run when asked to sample
    return list(dict.fromkeys(ch for _, ch in tok.unknown_characters(prompt)
                              if not (tok.end_of_word and ch.isspace())))


def drop_unseen(prompt: str, unseen: list[str]) -> None:
    """A button callback: the prompt without the characters the run's tokenizer never saw."""
    state.put(state.GPT_PROMPT, "".join(c for c in prompt if c not in unseen))


def use_byte_tokenizer() -> None:
    """A button callback: the next run gets a byte-level BPE tokenizer, which reads any text."""
    state.put_kept("variant", "byte")  # the variant the BPE pages share, so they show it too
    state.put(state.GPT_TOKENIZER, "bpe")
    state.reset_learn_step()
    st.toast("The next run you launch uses a byte-level BPE tokenizer: it can read any text.")


@st.cache_resource(show_spinner=False)
def device_info() -> tuple[str, str]:
    machine = this_machine()
    device = machine.pick("auto")
    return device, machine.describe(device)


def device_limits(device: str) -> ModelLimits:
    return limits_for(detect_device(device))


def run_threads(device: str, max_running: int | None) -> int:
    """The torch threads a run launched now will get (what ``core.room.runs.launch_run`` gives it)."""
    device = detect_device(device)
    return threads_per_run(max_running or default_max_running(device))


def device_text(device: str, max_running: int | None) -> str:
    """The device as a run launched now gets it: on a CPU, a run's threads (the page said "2
    threads", the app's own, above runs that each had 1)."""
    if device != "cpu":
        return device_info()[1]
    return (f"cpu ({plural(run_threads(device, max_running), 'thread')} a run, "
            f"{plural(cpu_cores(), 'core')} in all)")


ESTIMATE_TTL_S = 600  # a step timed for some settings is timed again after this long: the load moves


@st.cache_data(ttl=ESTIMATE_TTL_S, max_entries=64, show_spinner=False)
def measured_step(settings: str, _config, vocab_size: int, max_running: int | None,
                  _runs_dir) -> tuple[StepEstimate | None, str | None, int]:
    """A step of ``_config`` (by its ``settings``, as JSON) timed in a child process, with the
    threads a run launched now gets, or why it could not be, and the runs training beside it then
    (the load the figure was measured under, not the load when it is read): once per settings and
    ten minutes, a failure too, so a page run waits for the child process once, not at every rerun.
    Call it out of the page's line (``page_queue.step_aside``): it waits seconds on a child process,
    and so does every other run asking for the same settings meanwhile, on Streamlit's lock for them."""
    threads = _config.threads or run_threads(_config.device, max_running)
    beside = sum(map(len, queue_state(_runs_dir)))  # training and queued, anyone's
    try:
        return estimate_step(replace(_config, threads=threads), vocab_size), None, beside
    except ProbeError as exc:
        return None, str(exc), beside


def training_now(runs_dir, owner: str) -> tuple[int, int, int]:
    """(runs, anyone's, queued or training on this server now; how many of them ``owner``
    launched; runs it trains at the same moment): they take turns on the machine, the attendee's
    own run just launched among them."""
    training, queued = queue_state(runs_dir)
    now = training + queued
    yours = sum(run.parent.name == owner for run in now)  # a run's folder is in its owner's
    return len(now), yours, queue_settings(runs_dir)["max_running"]


def other_runs(others: int, yours: int) -> str:
    """"3 other runs (1 of them yours)": straight after Launch, the run just launched is one of the
    runs a further launch would share the machine with, and the attendee should know it is theirs."""
    said = plural(others, "other run")
    if not yours:
        return said
    if yours == others:
        return f"{said} ({'yours' if others == 1 else 'all yours'})"
    return f"{said} ({yours:,} of them yours)"


WORKSHOP_HOUR_S = 3600


def run_seconds(est: StepEstimate, config, others: int, gpt_workers: int = 1) -> float:
    """How long a run of ``config`` launched now trains (``StepEstimate.run_seconds``: its start,
    steps, evaluations, checkpoints and samples), in turns with the ``others`` on ``gpt_workers``
    GPT workers."""
    return est.run_seconds(config) * max(1.0, (others + 1) / gpt_workers)


def estimate_text(est: StepEstimate, config, vocab_size: int, others: int, gpt_workers: int = 1,
                  yours: int = 0, beside: int = 0) -> str:
    """What a run launched now will cost, and what the figure assumed: its time (settings, device,
    threads, the ``beside`` runs training when it was measured), its memory, and where it queues:
    beside or in turns with the ``others`` training now (``yours`` of them the attendee's) on
    ``gpt_workers`` GPT workers."""
    where = (f"this CPU with {plural(est.threads, 'thread')}" if est.device == "cpu"
             else this_machine().describe(est.device))  # "cuda (NVIDIA H200)"
    load = f"while {plural(beside, 'other run')} trained" if beside else "while no other run trained"
    alone = est.run_seconds(config)
    if others + 1 > gpt_workers:
        together = about(run_seconds(est, config, others, gpt_workers))
        queue = (f" It would take turns with the {other_runs(others, yours)} on this server's "
                 f"{plural(gpt_workers, 'GPT worker')}: {together} in all while they train.")
    elif others:
        queue = f" It starts at once on a free GPT worker, beside the {other_runs(others, yours)}."
    else:
        queue = " It starts at once: a GPT worker is free."
    memory = training_memory(config, vocab_size) / 2**20
    return (f"≈ **{est.seconds * 1000:,.0f} ms per step** → {about(alone)} for "
            f"{plural(config.max_steps, 'step')}, start, evaluations, checkpoints and samples included, "
            f"and about {memory:,.0f} MiB of memory. Measured on {where} (what a run "
            f"launched now gets), {plural(config.n_layer, 'layer')} × {config.n_embd} wide, context "
            f"{config.block_size}, batch {config.batch_size}, {vocab_size:,} tokens, {load}.{queue} Runs "
            f"that start while yours trains, and other work on this machine, slow it down.")


def hour_advice(est: StepEstimate, config, others: int, gpt_workers: int = 1) -> str | None:
    """A warning for a run that would outlast a workshop hour, with the steps that fit in one."""
    total = run_seconds(est, config, others, gpt_workers)
    if total <= WORKSHOP_HOUR_S:
        return None
    fits = max(1, int(config.max_steps * WORKSHOP_HOUR_S / total) // 100 * 100)
    return (f"This run would train for about {format_seconds(total)}: longer than a workshop hour. Lower "
            f"Steps to {fits:,} to finish within the hour, or pick a smaller model size.")


@st.cache_data(show_spinner=False, max_entries=64)
def too_short(digest: str, tokenizer_key: tuple, block_size: int, _text: str, _tokenizer) -> bool:
    """Whether the corpus (by its hash) is too short for ``block_size`` with the tokenizer named
    by ``tokenizer_key`` (``core.gpt.split.check_length``'s rule, so the GPT worker would refuse it)."""
    try:
        check_length(_text, _tokenizer, block_size)
    except DataTooShortError:
        return True
    return False


def owner_label(owner: str) -> str:
    """A short, stable name for an owner that does not reveal their id (the id is their key); the
    room's runs (a lesson's, trained once for everyone) are "the room"'s."""
    if owner == ROOM_OWNER:
        return "the room"
    return "attendee " + hashlib.sha256(owner.encode()).hexdigest()[:6]


def read_only_note(run: RunInfo) -> str:
    """Why a run another owns is read-only for its viewer, saying whose it is: the room's runs (a
    lesson's, started from a station by anyone) are everyone's, not another attendee's."""
    if run.owner == ROOM_OWNER:
        return ("The room's run, trained once for everyone: read-only (you can watch it and sample from "
                "it; the instructor manages it).")
    return "Shared by another attendee: read-only (you can watch it and sample from it)."


def run_label(run: RunInfo, viewer: Viewer) -> str:
    """What the run pickers show: the name for one's own runs, "(shared)" after a run launched
    before by someone else with the same settings (trained once), whose for anyone else's."""
    if run.joined_by == viewer.owner:
        return f"{run.name} (shared)"
    if run.owner == viewer.owner:
        return run.name
    return f"{run.name} · {owner_label(run.owner)}" + ("" if viewer.instructor else " (shared)")


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def queue_text(run: RunInfo) -> str:
    """e.g. "2nd to start, first turn in about 6 s" for a run that has not trained yet."""
    if run.queue_position is None or run.wait_s is None:
        return RunStatus.QUEUED
    wait = format_seconds(max(run.wait_s, 1.0))
    return f"{ordinal(run.queue_position)} to start, first turn in about {wait}"


def turns_text(run: RunInfo) -> str:
    """What a run's training looks like while others train too: e.g. "training now, in turns
    with 10 other runs on 2 GPT workers"."""
    now = "training now" if run.stepping else "waiting for its next turn"
    others = run.taking_turns - 1
    if others <= 0 or run.taking_turns <= run.runs_at_once:
        return "training now"
    return f"{now}, in turns with {plural(others, 'other run')} on {plural(run.runs_at_once, 'GPT worker')}"


def about(seconds: float) -> str:
    """"about 3 min 20 s", or "under a second" (never "about 0 s")."""
    said = format_seconds(seconds)
    return said if said.startswith("under") else f"about {said}"


def format_seconds(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "?"
    if seconds < 0.5:
        return "under a second"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def progress_and_eta(run: RunInfo) -> tuple[float, str]:
    """(fraction done, "ETA ..." text): from the run's own step time, stretched by the turns it
    takes with other runs (``core.room.queries``)."""
    total = run.max_steps or 1
    fraction = min(1.0, run.step / total)
    if run.status == RunStatus.QUEUED:
        return fraction, queue_text(run)
    if not run.active:
        return fraction, run.status
    if run.eta_s is None:
        return fraction, f"starting… · {turns_text(run)}"
    return fraction, f"ETA {format_seconds(run.eta_s)} · {turns_text(run)}"


LOSS_CURVES = ("train (batch)", "validation")
# the two curves told apart in either theme and without colour (the theme's first two colours are
# both blue): orange and solid, blue and dashed
LOSS_COLOURS = alt.Scale(domain=list(LOSS_CURVES), range=["#d97706", "#3b82f6"])
LOSS_DASHES = alt.Scale(domain=list(LOSS_CURVES), range=[[1, 0], [6, 3]])


def loss_chart(metrics: list[dict]) -> alt.Chart | None:
    rows = []
    for r in metrics:
        rows.append({"step": r["step"], "loss": r["train_loss"], "curve": LOSS_CURVES[0]})
        if "val_loss" in r:
            rows.append({"step": r["step"], "loss": r["val_loss"], "curve": LOSS_CURVES[1]})
    if not rows:
        return None
    return (alt.Chart(pd.DataFrame(rows)).mark_line(point=alt.OverlayMarkDef(size=20))
            .encode(x=alt.X("step:Q", title="step", axis=STEP_AXIS),
                    y=alt.Y("loss:Q", title="loss (nats / token)"),
                    color=alt.Color("curve:N", title=None, scale=LOSS_COLOURS,
                                    legend=alt.Legend(symbolType="stroke", symbolStrokeWidth=3)),
                    strokeDash=alt.StrokeDash("curve:N", title=None, scale=LOSS_DASHES),  # one legend
                    tooltip=["step", "curve", "loss"])
            .properties(width="container", height=220, autosize=FIT_WIDTH))


# a run's name in a legend is never cut (Vega-Lite cuts at 160 px: "07_char_vs_bpe_gpt-bp…")
RUN_LEGEND = alt.Legend(orient="bottom", direction="vertical", columns=1, labelLimit=0, title=None)


@st.cache_data(show_spinner=False, max_entries=256)
def _corpus_file(path: str, size: int, mtime_ns: int) -> tuple[str, int, str]:
    raw = Path(path).read_bytes()
    text = raw.decode("utf-8", "surrogatepass")
    opening = " ".join(text[:80].split())
    if len(opening) > 50 and " " in opening[40:]:  # cut at a word
        opening = opening[:40] + opening[40:].split(" ", 1)[0]
    opening = opening.rstrip(",;:.!? ")  # it is followed by "…"
    return text_digest(raw), len(text), opening


def run_corpus(run: RunInfo) -> tuple[str, int, str] | None:
    """``(digest, characters, opening words)`` of the corpus the run trained on (the copy kept in
    its folder; ``core.digest.text_digest``'s), or ``None`` where the folder holds none."""
    path = run.path / CORPUS_FILE
    try:
        stat = path.stat()
        return _corpus_file(str(path), stat.st_size, stat.st_mtime_ns)
    except OSError:
        return None


def corpus_title(corpus: tuple[str, int, str] | None, sidebar: tuple[str, str] | None = None) -> str:
    """Which corpus a chart's runs trained on, as a person tells corpora apart: the sidebar's
    (``sidebar``: its hash and name) by the name the sidebar gives it, another by its length and
    first words.  Plain text: its words are an attendee's."""
    if corpus is None:
        return "Runs whose corpus is not recorded"
    digest, characters, opening = corpus
    if sidebar is not None and digest == sidebar[0]:
        return f"{sidebar[1]}, the corpus in the sidebar ({characters:,} characters)"
    return f"Corpus of {characters:,} characters beginning “{opening}…”"


def bpc_charts(runs: dict[str, RunInfo],
               sidebar: tuple[str, str] | None = None) -> list[tuple[str, alt.Chart]]:
    """Validation bits per character of the runs (by label), one chart per corpus they trained on,
    each with its title (:func:`corpus_title`), the sidebar's corpus (``sidebar``) first.
    Bits per character are fair across tokenizers on one validation text, the last 10% of a
    corpus, and mean nothing across corpora: runs on other corpora never share an axis."""
    by_corpus: dict = {}
    for label, run in runs.items():
        rows = [{"run": label, "step": r["step"], "bits per character": r["val_bpc"],
                 "elapsed s": r["elapsed_s"]} for r in read_metrics(run.path) if "val_bpc" in r]
        if rows:
            by_corpus.setdefault(run_corpus(run), []).extend(rows)
    current = sidebar and sidebar[0]
    ordered = sorted(by_corpus, key=lambda corpus: corpus is None or corpus[0] != current)
    return [(corpus_title(corpus, sidebar), _bpc_chart(by_corpus[corpus])) for corpus in ordered]


# the least span of a bits-per-character axis: a run's first evaluation alone drew an axis of one
# tick ("4.053994") in the middle of nothing
BPC_SPAN = 0.2


def _bpc_chart(rows: list[dict]) -> alt.Chart:
    values = [r["bits per character"] for r in rows]
    pad = max(0.0, BPC_SPAN - (max(values) - min(values))) / 2
    y_scale = alt.Scale(zero=False, **({"domain": [min(values) - pad, max(values) + pad]} if pad else {}))
    return (alt.Chart(pd.DataFrame(rows)).mark_line(point=True)
            .encode(x=alt.X("step:Q", axis=STEP_AXIS, scale=alt.Scale(domainMin=0)),
                    y=alt.Y("bits per character:Q", scale=y_scale,
                            axis=alt.Axis(title="bits / char", titleLimit=0, format=".2f")),
                    color=alt.Color("run:N", legend=RUN_LEGEND),
                    tooltip=["run", "step", "bits per character", "elapsed s"])
            .properties(width="container", height=240, autosize=FIT_WIDTH))


SAMPLES_SHOWN = 30  # the newest samples drawn; a long run's oldest are left out, and said to be


def sample_history(samples: list[dict]) -> list[dict]:
    """A run's samples one per step, the newest first (a run resumed after a kill may have written
    a step's sample twice: the later one)."""
    by_step = {sample["step"]: sample for sample in samples}
    return [by_step[step] for step in sorted(by_step, reverse=True)]


def sample_heading(sample: dict) -> str:
    bpc = sample.get("val_bpc")
    return f"Step {sample['step']:,} · " + (f"{bpc:.3f} bits/char" if bpc is not None else "not evaluated")


def show_samples(samples: list[dict]) -> None:
    """The run's samples, the newest first, each under its step and validation bits per character,
    wrapped to the box (a long line ran out of it), in a box that scrolls back through training."""
    history = sample_history(samples)
    st.markdown("**Samples, the newest first**")
    st.caption("What the model wrote at each evaluation, beside its validation bits per character "
               "then: scroll down to go back through training.")
    box = st.container(height=420 if len(history) > 2 else "content", border=True)
    for sample in history[:SAMPLES_SHOWN]:
        box.markdown(f"**{sample_heading(sample)}**")
        box.code(sample["text"], language=None, wrap_lines=True)
    if len(history) > SAMPLES_SHOWN:
        box.caption(f"The {SAMPLES_SHOWN} newest of {len(history):,} samples.")


def corpus_first(runs: dict[str, RunInfo], current_digest: str | None) -> tuple[dict, dict]:
    """``runs`` (by label, in their order) with those trained on the sidebar's corpus
    (``current_digest``) first, and those alone: Generate opens on a checkpoint of the corpus the
    attendee chose."""
    same = {label: run for label, run in runs.items() if (run_corpus(run) or (None,))[0] == current_digest}
    return {**same, **runs}, same


def own_run_first(labels: dict[str, RunInfo], viewer: Viewer, selected: str | None = None) -> str | None:
    """The run a picker opens on: ``selected`` where it is the viewer's or the room's, else the
    viewer's newest (``labels`` come newest first, as ``list_runs`` gives them), else the room's
    newest (a station's runs); ``None`` rather than a run another attendee shared: what one
    attendee launched is never what another's page opens on."""
    opened = opens_on(labels, viewer)
    if selected in opened:
        return selected
    return opened[0] if opened else None


def opens_on(labels: dict[str, RunInfo], viewer: Viewer) -> list[str]:
    """The runs a page may show the viewer unasked, in order: their own (launched or joined), then
    the room's (the stations' runs, trained once for everyone)."""
    own = [label for label, run in labels.items() if viewer.owner in (run.owner, run.joined_by)]
    return own + [label for label, run in labels.items() if run.owner == ROOM_OWNER and label not in own]


def describe_run(run: RunInfo) -> str:
    """One line under the run picker: its state, tokenizer and model shape (and, for a run
    trained once for several launchers, how many)."""
    config = run.config
    shared = (f"trained once for the {run.launchers} attendees who launched it · "
              if run.launchers > 1 else "")
    if not config:
        return shared + run.status
    tc = config.get("train_config", {})
    return (f"{shared}{run.status} · {config.get('tokenizer_kind', '?')} tokenizer, "
            f"{config.get('vocab_size', '?')} tokens · {tc.get('n_layer')} layers × "
            f"{tc.get('n_embd')} wide, context {tc.get('block_size')} tokens · "
            f"{config.get('device_description', config.get('device', '?'))}")
