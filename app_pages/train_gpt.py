"""Train a GPT: launch a small GPT on the corpus with the char or the BPE tokenizer, watch it learn,
compare runs in bits per character, and generate text from any checkpoint.

Each visitor sees their own runs and the runs others shared (read-only); a launch identical to a
run launched before (same corpus, tokenizer, settings and seed) shows that run, trained once, as
theirs to watch; the instructor sees all.  Who may do what is checked in ``core.room.runs``: the
buttons drawn here only follow it.  Runs train in turns of a few seconds (``core.room.turns``), so
every curve in a room moves."""

import json
from dataclasses import asdict, astuple

import streamlit as st

from core import CharTokenizer
from core.gpt.config import PRESETS, default_preset, make_config, preset_help
from core.room.limits import LimitError, check_config
from core.room.owners import RunAccessError
from core.room.probe import MAX_PROMPT_CHARS, ProbeError
from core.runfolder.status import RunStatus
from core.room.runs import (delete_run, launch_run, list_runs, read_metrics, read_samples,
                           resume_run, sample_run, set_shared, stop_run, unique_run_name)
from ui.views import run_view
from ui.plumbing import state
from ui.plumbing.cache import TRAINING_ERRORS, server_settings, train_tokenizer
from ui.plumbing.corpus_sidebar import corpus_error_banner, load_tiny_shakespeare
from ui.plumbing.identity import identity_sidebar, viewer
from ui.plumbing.render import md_safe, show_error
from ui.serving import page_queue

GEN_RUN = "gpt_gen_run"  # the run Generate samples from
GEN_FOR = "gpt_gen_for"  # the sidebar corpus's hash when Generate's run was last chosen for it
GEN_TEXT = "gpt_generated"  # (run, text) Generate wrote last: kept on the page until the next, through
# every rerun (a job's progress bar ending, a slider moved), not only in the run the click started
SIZE_FIELDS = {"n_layer": 1, "n_head": 1, "n_embd": 16, "block_size": 8, "batch_size": 1}  # steps

identity_sidebar()
st.title("🧠 Train a GPT")
st.caption("Train a small decoder-only GPT on the corpus, once with single characters and once with "
           "BPE tokens. Loss per token cannot be compared between tokenizers (a BPE token carries "
           "more text), so runs are compared in **bits per character** of the same validation text.")

corpus_error_banner()
name, text = state.corpus()
sidebar_corpus = (state.corpus_digest(), name)  # how the charts and Generate tell it from the runs' own
device = run_view.device_info()[0]
runs_dir = state.runs_dir()
who = viewer()
settings_server = server_settings()


def size_inputs(base: dict, limits) -> dict:
    """The custom model's sizes, as typed: no bounds in the boxes, for a box refuses a number past
    its bounds in the browser alone (a red frame, the last number it took still sent), and Launch
    then ran what the boxes did not show; ``core`` checks every value, and the page says which."""
    cols = st.columns(len(SIZE_FIELDS) + 2)
    sizes = {field: int(col.number_input(field, value=min(base[field], getattr(limits, field)), step=step,
                                         key=f"gpt_{field}"))
             for col, (field, step) in zip(cols, SIZE_FIELDS.items())}
    sizes["dropout"] = float(cols[-2].number_input("dropout", value=base["dropout"], step=0.05,
                                                   key="gpt_dropout"))
    sizes["lr"] = float(cols[-1].number_input("lr", value=base["lr"], format="%.0e", key="gpt_lr"))
    if sizes["lr"] != base["lr"]:  # the preset's decay from another lr (its min_lr was above a small one)
        sizes["min_lr"] = sizes["lr"] * base["min_lr"] / base["lr"]
    return sizes


def tokenizer_for(kind: str):
    """The run's tokenizer: characters, or BPE on the other pages' settings (trained once)."""
    if kind == "char":
        return train_tokenizer(text, "char", 0, progress=False, digest=state.corpus_digest())
    return train_tokenizer(text, **asdict(settings), digest=state.corpus_digest())


def show_cost(config, vocab: int, again: bool) -> None:
    """What a run of these settings will cost, said before Launch: its steps timed in a child
    process once per settings (``again``: timed anew), its memory, where it queues, and a warning
    past a workshop hour."""
    settings_key = json.dumps([asdict(config), vocab, settings_server.max_running])
    if again:
        run_view.measured_step.clear(settings_key, config, vocab, settings_server.max_running, runs_dir)
    with st.spinner("Timing training steps in a helper process (a few seconds)…"), page_queue.step_aside():
        measured, failed, beside = run_view.measured_step(settings_key, config, vocab,
                                                          settings_server.max_running, runs_dir)
    if failed:
        show_error(ProbeError(failed), "Could not time a step: ")
        return
    others, yours, gpt_workers = run_view.training_now(runs_dir, who.owner)
    st.info(run_view.estimate_text(measured, config, vocab, others, gpt_workers, yours, beside))
    advice = run_view.hour_advice(measured, config, others, gpt_workers)
    if advice:
        st.warning(advice, icon="⏳")


def launch(config, kind: str, run_name: str) -> None:
    try:
        tok = CharTokenizer.from_text(text) if kind == "char" else tokenizer_for(kind)
        run = launch_run(config, unique_run_name(run_name, runs_dir, who.owner), runs_dir,
                         owner=who.owner, text=text, tokenizer=tok, settings=settings_server)
    except (ValueError, OSError) as exc:  # a refused name or config, a cap reached, a full disk
        show_error(exc, "Not launched: ")
        return
    state.select_run(run_view.run_label(run, who))
    if run.joined_by is not None:
        st.toast(f"{run.name}: launched before with the same corpus, tokenizer, settings and seed, so "
                 f"it trains once for everyone; you watch it ({run.status}).")
    else:
        st.toast(f"Queued {run.name}" if run.status == RunStatus.QUEUED else f"Launched {run.name}")


# -- settings ------------------------------------------------------------------------------------
with st.container(border=True):
    st.markdown(f"**Corpus:** {md_safe(name)} · {len(text):,} characters · **device:** "
                f"{run_view.device_text(device, settings_server.max_running)}")
    settings = state.tokenizer_settings()
    c1, c2, c3 = st.columns(3)
    state.relabel(state.GPT_TOKENIZER)  # BPE's name says its merges, which a paste changes
    kind = c1.radio("Tokenizer", ["char", "bpe"], key=state.GPT_TOKENIZER, horizontal=True,
                    bind="query-params",
                    format_func=lambda k: "characters" if k == "char" else
                    f"BPE ({settings.variant}, {settings.num_merges} merges)",
                    help="BPE uses the tokenizer trained on the other pages' settings.")
    sizes = [*PRESETS, "custom"]
    preset = c2.selectbox("Model size", sizes, index=sizes.index(default_preset(device)), key="gpt_preset",
                          bind="query-params",
                          help="\n\n".join([*map(preset_help, PRESETS), "custom: your sizes"]))
    c1, c2 = st.columns([2, 1])
    device_choice = c2.selectbox("Device", ["auto", "cpu", "cuda", "mps"], key="gpt_device",
                                 bind="query-params", help=f"auto picks {device} here.")
    try:
        limits = run_view.device_limits(device_choice)
        device_ok = True
    except ValueError as exc:  # e.g. cuda asked for on a machine without one (core.gpt.device)
        show_error(exc)
        limits = run_view.device_limits("auto")
        device_ok = False
    base = PRESETS[default_preset(device) if preset == "custom" else preset]
    # no bounds in the box, as for the sizes (``size_inputs``): core says what is past them
    max_steps = c3.number_input("Steps", value=min(base["max_steps"], limits.max_steps), step=100,
                                key="gpt_steps", bind="query-params")
    st.caption(f"Model bounds {limits.describe()}.")
    overrides = size_inputs(base, limits) if preset == "custom" else {}
    state.suggest_run_name(f"{kind}-{preset}")
    run_name = c1.text_input("Run name", **state.keep(state.GPT_RUN_NAME))
    try:
        tok = tokenizer_for(kind) if text else None
    except TRAINING_ERRORS as exc:
        show_error(exc)
        tok = None
    too_big = bool(text) and tok is None  # a tokenizer that could not be trained
    try:
        config = make_config(preset if preset != "custom" else default_preset(device),
                             max_steps=int(max_steps), device=device_choice, **overrides)
        check_config(config, limits.device_kind, tok.vocab_size if tok else 0)
    except (LimitError, ValueError) as exc:  # over this device's bounds, or inconsistent sizes
        show_error(exc)
        too_big = True
        if getattr(exc, "by_vocabulary", False) and (kind, settings.variant) != ("bpe", "byte"):
            st.button("Use a byte-level tokenizer", key="gpt_use_bytes_for_size",
                      on_click=run_view.use_byte_tokenizer)
    too_short = tok is not None and not too_big and run_view.too_short(
        state.corpus_digest(), (kind, *astuple(settings)), config.block_size, text, tok)
    if too_short:
        st.warning(f"This corpus is too short to train on with a context of {config.block_size} tokens: "
                   f"the 10% kept for validation needs at least {config.block_size + 1} tokens. Load a "
                   f"longer corpus, or a shorter context (Model size: custom, then block_size).", icon="📏")
        st.button("Load Tiny Shakespeare (1 MB of plays)", key="gpt_load_shakespeare",
                  on_click=load_tiny_shakespeare)
    blocked = too_big or too_short or not text or not device_ok
    cost = st.container()  # above the buttons, filled last: timing new settings takes seconds, and
    # the buttons are there meanwhile (drawn after it, Launch was missing while a step was timed)
    buttons = st.container(horizontal=True)  # buttons as wide as their labels, wrapping when narrow
    again = buttons.button("⏱ Time a step again", key="gpt_estimate", disabled=blocked,
                           help="The cost above is timed once for these settings; time it again now.")
    if buttons.button("🚀 Launch", key="gpt_launch", type="primary", disabled=blocked):
        launch(config, kind, run_name)
    if not blocked:
        with cost:
            show_cost(config, tok.vocab_size, again)

runs = list_runs(runs_dir, who)
if not runs:
    launch_first = "Launch one above" if not blocked else "Once the settings above can train, launch one"
    st.info(f"No runs yet. {launch_first}; it keeps training if you reload the page or close the "
            "tab (keep this page's address: it is how the app knows the runs are yours).")
    st.stop()


active_state = {(r.owner, r.name, r.status) for r in runs if r.active}
state.open_runs({run_view.run_label(r, who): (r.owner, r.name) for r in runs})  # a station's button


# -- one run, live -------------------------------------------------------------------------------
def run_controls(run) -> None:
    """Stop or leave the queue; resume, share or delete one that does not train.  Only for the
    run's owner or the instructor: a run shared by someone else is read-only, and so is one
    launched before by someone else with the same settings (it can be removed from one's list)."""
    if run.joined_by == who.owner and not who.instructor:
        st.caption("Shared: launched before with the same corpus, tokenizer, settings and seed, so it "
                   "trains once for everyone who launched it; read-only (you can watch it and sample "
                   "from it).")
        if st.button("Remove from my runs", key="gpt_leave_shared",
                     help="It trains on for the others who launched it."):
            try:
                delete_run(run.join_path, who)
            except (RunAccessError, ValueError, OSError) as exc:  # e.g. removed in another tab a moment ago
                show_error(exc)
                return
            st.rerun()
        return
    if not who.can_manage(run):
        st.caption(run_view.read_only_note(run))
        return
    try:
        _manage(run)
    except (RunAccessError, ValueError, OSError) as exc:  # ValueError: a run in the wrong state
        show_error(exc)


def _share(run) -> None:
    try:
        set_shared(run.path, who, not run.shared)
    except (RunAccessError, ValueError, OSError) as exc:  # e.g. deleted in another tab a moment ago
        st.toast(str(exc))


def _manage(run) -> None:
    # one row, each control as wide as its label, wrapping when narrow (columns cut "🗑 Delete")
    row = st.container(horizontal=True, vertical_alignment="center")
    if run.active:
        label = "⏹ Leave the queue" if run.status == RunStatus.QUEUED else "⏹ Stop training"
        if row.button(label, key="gpt_stop"):
            with st.spinner("Stopping (saving a final checkpoint)…"):
                stop_run(run.path, who)
            st.rerun()
    else:
        until = f" to step {run.max_steps:,}" if run.max_steps else ""
        if run.resumable and row.button("▶ Resume", key="gpt_resume",
                                        help=f"Carry on from the last checkpoint{until}."):
            resume_run(run.path, who, settings_server)
            st.rerun()
        with row.popover("🗑 Delete"):
            st.markdown(f"Delete **{md_safe(run.name)}** with its checkpoint, metrics and samples?")
            if st.button("Delete for good", key="gpt_delete", type="primary"):
                delete_run(run.path, who)
                st.rerun()
    row.toggle("Share with the room", value=run.shared, key=f"gpt_share_{run.owner}_{run.name}",
               on_change=_share, args=(run,),
               help="Everyone then sees this run's curves and samples, read-only.")


def run_metrics(run, metrics: list[dict]) -> None:
    last = run.last
    evals = [r for r in metrics if "val_loss" in r]
    # tiles as wide as their figures, wrapping onto a second row when narrow (four equal columns
    # cut "12,345" at 800 px)
    m = st.container(horizontal=True, gap="large")
    m.metric("tokens / s", f"{last.get('tokens_per_s', 0):,.0f}", width="content")
    m.metric("val loss", f"{evals[-1]['val_loss']:.3f}" if evals else "–", width="content")
    m.metric("val bits / char", f"{evals[-1]['val_bpc']:.3f}" if evals else "–", width="content")
    m.metric("context (chars)", f"{run.config.get('context_chars', 0):,.0f}" if run.config else "–",
             help="How many characters of text the model's context (block_size tokens) covers, on average.",
             width="content")


@st.fragment(run_every=2 if active_state else None)
def live_run() -> None:
    current = list_runs(runs_dir, who)
    if not current or {(r.owner, r.name, r.status) for r in current if r.active} != active_state:
        st.rerun()  # a run queued, started, ended or was deleted: the whole page follows
    all_runs = {run_view.run_label(r, who): r for r in current}
    state.restore(state.GPT_SELECTED_RUN, all_runs)  # the run watched before a visit to another page
    if state.selected_run() not in all_runs:  # the attendee's own run first, never another's
        state.select_run(run_view.own_run_first(all_runs, who))
    # plain labels: Streamlit keeps showing the label a selected option had when it was picked
    chosen = state.remember(state.GPT_SELECTED_RUN, st.selectbox(
        "Run", list(all_runs), key=state.GPT_SELECTED_RUN, placeholder="Pick a run shared with the room…"))
    state.url_put(state.RUN_PARAM, chosen)  # a reload shows this run again
    if chosen is None:
        st.info("You have no runs yet: launch one above. Runs others share with the room are in the "
                "list: pick one to watch it.")
        return
    run = all_runs[chosen]
    st.caption(run_view.describe_run(run))
    metrics = read_metrics(run.path)
    fraction, eta = run_view.progress_and_eta(run)
    st.progress(fraction, text=f"step {run.step:,} / {run.max_steps or 0:,} · {eta}")
    if run.status == RunStatus.QUEUED:
        st.info(f"Waiting for a first turn: {run_view.queue_text(run)}. Every run takes turns of a "
                f"few seconds on this server's GPT workers, so every curve moves.")
    if run.status == RunStatus.FAILED:
        st.error(f"Run failed: {md_safe(run.error or 'no reason recorded')}")
    run_controls(run)
    run_metrics(run, metrics)
    chart = run_view.loss_chart(metrics)
    if chart is not None:
        st.altair_chart(chart, width="stretch")
    samples = read_samples(run.path)
    if samples:
        run_view.show_samples(samples)


live_run()


# -- comparison ----------------------------------------------------------------------------------
@st.fragment(run_every=5 if active_state else None)
def bpc_chart_section() -> None:
    """Bits per character puts char and BPE runs on one scale, one chart per corpus; it redraws
    while runs train."""
    st.subheader("Compare runs: validation bits per character")
    current = {run_view.run_label(r, who): r for r in list_runs(runs_dir, who)}
    state.sync_bpc_runs(list(current), run_view.opens_on(current, who))
    chosen = state.remember(state.GPT_BPC_RUNS, st.multiselect("Runs", list(current), key=state.GPT_BPC_RUNS))
    charts = run_view.bpc_charts({label: current[label] for label in chosen}, sidebar_corpus)
    if not charts:
        st.caption("No evaluations yet.")
    if len(charts) > 1:
        st.info(f"These runs trained on {len(charts)} different corpora. Bits per character compare "
                "runs only on the same validation text (the last 10% of one corpus), so each corpus "
                "has its own chart.", icon="📚")
    for title, chart in charts:
        st.markdown(f"**{md_safe(title)}**")
        st.altair_chart(chart, width="stretch")


bpc_chart_section()

# -- generation ----------------------------------------------------------------------------------
st.subheader("Generate")
ready = {run_view.run_label(r, who): r for r in runs if r.has_checkpoint and not r.active}
if not ready:
    st.caption("A run's checkpoint can be sampled once it has finished or been stopped.")
    st.stop()
ready, on_corpus = run_view.corpus_first(ready, state.corpus_digest())
if state.get(state.restore(GEN_RUN, ready)) not in ready or state.get(GEN_FOR) != state.corpus_digest():
    # a run trained on the sidebar's corpus first, the attendee's own first, never the room's over it
    first = run_view.own_run_first(on_corpus, who, state.selected_run())
    state.put(GEN_RUN, first or run_view.own_run_first(ready, who, state.selected_run()))
    state.put(GEN_FOR, state.corpus_digest())
# the run on a row of its own: a run's name with its owner ("… · the room (shared)") is cut in a column
gen_label = state.remember(GEN_RUN, st.selectbox(
    "Checkpoint of run", list(ready), key=GEN_RUN, placeholder="Pick a finished run…",
    format_func=lambda run: run if run in on_corpus else f"{run} · another corpus"))
if gen_label is None:
    st.caption("Your runs can be sampled once they have finished or been stopped; pick one the room "
               "shares to sample it.")
    st.stop()
trained_on = run_view.run_corpus(ready[gen_label])
st.caption("Trained on: " + md_safe(run_view.corpus_title(trained_on, sidebar_corpus)))
g2, g3, g4 = st.columns(3)
temperature = state.choice(g2.slider, "Temperature", 0.0, 2.0, 0.8, 0.05, key="gpt_temperature")
top_k = state.choice(g3.number_input, "Top-k (0 = all)", 0, 10_000, 0, key="gpt_top_k")
n_tokens = state.choice(g4.number_input, "Tokens", 1, 2000, 200, key="gpt_gen_tokens")
# no max_chars (Streamlit's counter counts UTF-16 units): a prompt over MAX_PROMPT_CHARS characters is
# refused with its length when sampled
# empty by default, said in words: a new line (what an empty prompt starts from, in
# ``core.room.probe.sample_checkpoint``) showed as an empty one-line box, which warned that a run whose
# corpus had none could not read it
prompt = state.choice(st.text_input, "Prompt", value="", key=state.GPT_PROMPT,
                      placeholder="Empty: the model writes from scratch",
                      help=f"The text the model continues. Up to {MAX_PROMPT_CHARS:,} characters.")
unseen = run_view.unseen_in_prompt(ready[gen_label].path, prompt)
if unseen:
    st.warning("This run's tokenizer never saw " + ", ".join(md_safe(repr(c)) for c in unseen)
               + " in its corpus, so it cannot read this prompt. Drop those characters, or train "
               "your next run with a byte-level tokenizer, which reads any text.", icon="🔤")
    actions = st.container(horizontal=True)
    actions.button("Drop unseen characters", key="gpt_drop_unseen", on_click=run_view.drop_unseen,
                   args=(prompt, unseen))
    actions.button("Use a byte-level tokenizer", key="gpt_use_bytes",
                   on_click=run_view.use_byte_tokenizer)
generate = st.button("Generate", key="gpt_generate")
if generate and unseen:
    st.error("The prompt cannot be encoded with this run's tokenizer: drop the unseen characters first.")
elif generate:
    state.put(GEN_TEXT, None)
    with st.spinner("Sampling from the checkpoint in a helper process…"), page_queue.step_aside():
        try:
            state.put(GEN_TEXT, (gen_label, sample_run(ready[gen_label].path, who, prompt, int(n_tokens),
                                                       float(temperature), int(top_k))))
        except (RunAccessError, ProbeError, ValueError) as exc:  # ValueError: no checkpoint (core.room.runs)
            show_error(exc)
written = state.get(GEN_TEXT)
if written is not None and written[0] == gen_label:
    st.code(written[1], language=None, wrap_lines=True)  # a long line stays in sight
