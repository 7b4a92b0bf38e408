"""Train a GPT: launch a small GPT on the corpus with the char or the BPE tokenizer, watch it learn,
compare runs in bits per character, and generate text from any checkpoint."""

import streamlit as st

from core import CharTokenizer, UnknownCharacterError
from core.checkpoint import CheckpointError
from core.runs import (delete_run, launch_run, list_runs, read_metrics, read_samples, resume_run,
                       stop_run, unique_run_name)
from core.train import PRESETS, make_config
from ui import runs as ui_runs
from ui.corpus import corpus_error_banner, load_tiny_shakespeare
from ui.frame import require_frame
from ui.render import md_safe
from ui.state import get_corpus, get_tokenizer_settings, get_trained_tokenizer

SIZE_FIELDS = {"n_layer": (1, 24, 1), "n_head": (1, 16, 1), "n_embd": (16, 1024, 16),
               "block_size": (8, 1024, 8), "batch_size": (1, 512, 1)}

require_frame()
st.title("🧠 Train a GPT")
st.caption("Train a small decoder-only GPT on the corpus, once with single characters and once with "
           "BPE tokens. Loss per token cannot be compared between tokenizers (a BPE token carries "
           "more text), so runs are compared in **bits per character** of the same validation text.")

corpus_error_banner()
name, text = get_corpus()
device, device_text = ui_runs.device_info()
runs_dir = ui_runs.runs_dir()

# -- settings ------------------------------------------------------------------------------------
with st.container(border=True):
    st.markdown(f"**Corpus:** {md_safe(name)} · {len(text):,} characters · **device:** {device_text}")
    settings = get_tokenizer_settings()
    c1, c2, c3 = st.columns(3)
    kind = c1.radio("Tokenizer", ["char", "bpe"], key="gpt_tokenizer", horizontal=True,
                    format_func=lambda k: "characters" if k == "char" else
                    f"BPE ({settings['variant']}, {settings['num_merges']} merges)",
                    help="BPE uses the tokenizer trained on the other pages' settings.")
    preset = c2.selectbox("Model size", [*PRESETS, "custom"], key="gpt_preset",
                          help="tiny: 4 layers × 128 wide, about a minute on a laptop CPU. "
                               "small: nanoGPT's Shakespeare model (6 × 384, context 256): about "
                               "30 s for 2,000 steps on an H100 GPU, far too slow for a CPU.")
    base = PRESETS["tiny" if preset == "custom" else preset]
    max_steps = c3.number_input("Steps", 1, 100_000, base["max_steps"], step=100, key="gpt_steps")
    overrides = {}
    if preset == "custom":
        cols = st.columns(len(SIZE_FIELDS) + 2)
        for col, (field, (lo, hi, step)) in zip(cols, SIZE_FIELDS.items()):
            overrides[field] = int(col.number_input(field, lo, hi, base[field], step=step, key=f"gpt_{field}"))
        overrides["dropout"] = float(cols[-2].number_input("dropout", 0.0, 0.9, base["dropout"], 0.05,
                                                           key="gpt_dropout"))
        overrides["lr"] = float(cols[-1].number_input("lr", 1e-5, 1e-1, base["lr"], format="%.0e",
                                                      key="gpt_lr"))
    c1, c2 = st.columns([2, 1])
    ui_runs.suggest_run_name(f"{kind}-{preset}")
    run_name = c1.text_input("Run name", key=ui_runs.RUN_NAME_KEY)
    device_choice = c2.selectbox("Device", ["auto", "cpu", "cuda", "mps"], key="gpt_device",
                                 help=f"auto picks {device} here.")
    try:
        config = make_config(preset if preset != "custom" else "tiny", max_steps=int(max_steps),
                             tokenizer=kind, device=device_choice, **overrides)
    except ValueError as exc:
        st.error(str(exc))
        st.stop()

    too_short = len(text) * 0.1 < config.block_size + 1
    if too_short:
        st.warning(f"This corpus is too short for a context of {config.block_size} tokens: the 10% "
                   f"validation part needs at least {config.block_size + 1} tokens. Load a longer "
                   f"corpus, or pick a smaller block size.")
        st.button("Load Tiny Shakespeare (1 MB of plays)", key="gpt_load_shakespeare",
                  on_click=load_tiny_shakespeare)
    b1, b2, _ = st.columns([1, 1, 2])
    if b1.button("Estimate time per step", key="gpt_estimate", disabled=not text):
        vocab = len(set(text)) + (settings["num_merges"] if kind == "bpe" else 0)
        with st.spinner("Timing a forward and backward pass…"):
            seconds = ui_runs.step_seconds(tuple(sorted({**config.to_dict(), "device": "auto"}.items())),
                                           vocab, device if device_choice == "auto" else device_choice)
        st.session_state["gpt_estimate_text"] = (
            f"≈ {seconds * 1000:,.0f} ms per step on {device} → about "
            f"{ui_runs.format_seconds(seconds * config.max_steps)} for {config.max_steps:,} steps "
            f"(plus evaluation).")
    if st.session_state.get("gpt_estimate_text"):
        st.info(st.session_state["gpt_estimate_text"])
    if b2.button("🚀 Launch", key="gpt_launch", type="primary", disabled=too_short or not text):
        try:
            tok = CharTokenizer.from_text(text) if kind == "char" else get_trained_tokenizer()
            run = launch_run(config, unique_run_name(run_name, runs_dir), runs_dir, text=text, tokenizer=tok)
            st.session_state[ui_runs.SELECTED_KEY] = run.name
            st.toast(f"Launched {run.name}")
        except (ValueError, OSError) as exc:
            st.error(str(exc))

runs = list_runs(runs_dir)
if not runs:
    st.info("No runs yet. Launch one above; it keeps training if you reload the page or close the tab.")
    st.stop()


active_names = {r.name for r in runs if r.active}


# -- one run, live -------------------------------------------------------------------------------
def run_controls(run) -> None:
    """Stop a run that trains; resume (from its last checkpoint) or delete one that does not."""
    if run.active:
        if st.button("⏹ Stop", key="gpt_stop"):
            with st.spinner("Stopping (saving a final checkpoint)…"):
                stop_run(run.path)
            st.rerun()
        return
    c1, c2, _ = st.columns([1, 1, 4])
    try:
        until = f" to step {run.max_steps:,}" if run.max_steps else ""
        if run.resumable and c1.button("▶ Resume", key="gpt_resume",
                                       help=f"Carry on from the last checkpoint{until}."):
            resume_run(run.path)
            st.rerun()
        with c2.popover("🗑 Delete"):
            st.markdown(f"Delete **{md_safe(run.name)}** with its checkpoint, metrics and samples?")
            if st.button("Delete for good", key="gpt_delete", type="primary"):
                delete_run(run.path)
                st.rerun()
    except (ValueError, OSError) as exc:
        st.error(str(exc))


@st.fragment(run_every=2 if active_names else None)
def live_run() -> None:
    all_runs = {r.name: r for r in list_runs(runs_dir)}
    if not all_runs or {n for n, r in all_runs.items() if r.active} != active_names:
        st.rerun()  # a run ended, started or was deleted: the whole page (Generate, polling) follows
    names = list(all_runs)
    if st.session_state.get(ui_runs.SELECTED_KEY) not in all_runs:
        st.session_state[ui_runs.SELECTED_KEY] = names[0]
    # plain names: Streamlit keeps showing the label a selected option had when it was picked
    selected = st.selectbox("Run", names, key=ui_runs.SELECTED_KEY)
    run = all_runs[selected]
    st.caption(ui_runs.describe_run(run))
    metrics = read_metrics(run.path)
    fraction, eta = ui_runs.progress_and_eta(run, metrics)
    st.progress(fraction, text=f"step {run.step:,} / {run.max_steps or 0:,} · {eta}")
    if run.status == "failed":
        st.error(f"Run failed: {md_safe(run.error or 'no reason recorded')}")
    run_controls(run)
    last = run.last
    evals = [r for r in metrics if "val_loss" in r]
    m = st.columns(4)
    m[0].metric("tokens / s", f"{last.get('tokens_per_s', 0):,.0f}")
    m[1].metric("val loss", f"{evals[-1]['val_loss']:.3f}" if evals else "–")
    m[2].metric("val bits / char", f"{evals[-1]['val_bpc']:.3f}" if evals else "–")
    m[3].metric("context (chars)", f"{run.config.get('context_chars', 0):,.0f}" if run.config else "–",
                help="How many characters of text block_size tokens cover, on average.")
    chart = ui_runs.loss_chart(metrics)
    if chart is not None:
        st.altair_chart(chart, use_container_width=True)
    samples = read_samples(run.path)
    if samples:
        st.markdown(f"**Sample at step {samples[-1]['step']:,}**")
        st.code(samples[-1]["text"], language=None)


live_run()

# -- comparison ----------------------------------------------------------------------------------
@st.fragment(run_every=5 if active_names else None)
def compare_runs() -> None:
    """Bits per character puts char and BPE runs on one scale; it redraws while runs train."""
    st.subheader("Compare runs: validation bits per character")
    current = list_runs(runs_dir)
    names = [r.name for r in current]
    ui_runs.add_new_runs_to_comparison(names)
    chosen = st.multiselect("Runs", names, key=ui_runs.COMPARE_KEY)
    chart = ui_runs.bpc_chart([r for r in current if r.name in chosen])
    if chart is None:
        st.caption("No evaluations yet.")
    else:
        st.altair_chart(chart, use_container_width=True)


compare_runs()

# -- generation ----------------------------------------------------------------------------------
st.subheader("Generate")
ready = [r for r in runs if r.has_checkpoint and not r.active]
if not ready:
    st.caption("A run's checkpoint can be sampled once it has finished or been stopped.")
    st.stop()
g1, g2, g3, g4 = st.columns([2, 1, 1, 1])
gen_name = g1.selectbox("Checkpoint of run", [r.name for r in ready], key="gpt_gen_run")
temperature = g2.slider("Temperature", 0.0, 2.0, 0.8, 0.05, key="gpt_temperature")
top_k = g3.number_input("Top-k (0 = all)", 0, 10_000, 0, key="gpt_top_k")
n_tokens = g4.number_input("Tokens", 1, 2000, 200, key="gpt_gen_tokens")
prompt = st.text_input("Prompt", "\n", key="gpt_prompt")
if st.button("Generate", key="gpt_generate"):
    run = next(r for r in ready if r.name == gen_name)
    try:
        st.code(ui_runs.generate(run, prompt, int(n_tokens), float(temperature), int(top_k)), language=None)
    except UnknownCharacterError as exc:
        st.error(f"The prompt cannot be encoded with this run's tokenizer: {exc}")
    except CheckpointError as exc:
        st.error(str(exc))
