"""The "Train a GPT" page in AppTest: launch a tiny run, watch metrics arrive, stop it, generate;
each browser (its ``?u=`` id) sees its own runs and the shared ones; the instructor sees all."""

import html
import json
import os
import signal
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import finished_run, poll_until_done
from conftest import shared_path
from core.corpus import CorpusError
from core.gpt.config import make_config
from core.room.runs import SERVER, launch_run, list_runs, pid_alive, read_metrics, set_shared, stop_run
from core import samples
from core.samples import PYTHON_DOCS
from ui.plumbing.corpus_sidebar import TRAINING_CHOICE

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "streamlit_app.py"
# the corpus and the config of tests/gpt/test_train.py: ~6k learnable characters, a one-layer model
_LINES = ("the cat sat on the mat and the dog sat on the log.|a bird in the hand is worth two in the "
          "bush.|to be or not to be, that is the question.|all that glitters is not gold; all who "
          "wander are not lost.").split("|")
TEXT = "\n".join(_LINES[(i * 7) % 4] for i in range(120)) + "\n"
TINY = dict(n_layer=1, n_head=2, n_embd=32, block_size=16, batch_size=16, max_steps=40, lr=3e-3,
            min_lr=3e-4, warmup_steps=2, eval_interval=20, eval_iters=4, log_interval=5,
            sample_interval=20, sample_tokens=16, device="cpu", threads=1)


def tiny_config(**kw):
    return make_config("tiny", **{**TINY, **kw})


ALICE, BOB = "alice-0123456789", "bob-0123456789ab"
KEY = "instructor-key-for-tests"


def open_page(runs_dir, owner=ALICE) -> AppTest:
    """A new browser session opened at the Train a GPT page's URL (``?u=owner``), with the test
    corpus."""
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params["u"] = owner
    at.session_state["gpt_runs_dir"] = str(runs_dir)
    at.session_state["corpus_name"] = "test corpus"
    at.session_state["corpus_text"] = TEXT
    at.switch_page("app_pages/train_gpt.py")
    return at


@pytest.fixture
def app(tmp_path):
    at = open_page(tmp_path)
    try:
        yield at
    finally:  # never leave a training process behind
        for run in list_runs(tmp_path):
            if run.active:
                stop_run(run.path, SERVER, timeout=10)
            if run.pid and pid_alive(run.pid):
                try:
                    os.killpg(run.pid, signal.SIGKILL)
                except ProcessLookupError:  # it ended between the two lines
                    pass


def poll(at, predicate, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        at.run()
        if predicate(at):
            return
        time.sleep(0.5)
    raise AssertionError("timed out waiting for the page; errors: "
                         + "; ".join(e.value for e in at.error) + " exceptions: "
                         + "; ".join(str(e.value) for e in at.exception))


def val_loss_shown(at) -> bool:
    return any(m.label == "val loss" and m.value != "–" for m in at.metric)


@pytest.mark.slow
def test_launch_watch_stop_and_generate(app, tmp_path):
    at = app.run()
    assert not at.exception
    assert "No runs yet" in " ".join(i.value for i in at.info)
    at.selectbox(key="gpt_preset").select("custom").run()
    for key, value in {"gpt_n_layer": 1, "gpt_n_head": 2, "gpt_n_embd": 32, "gpt_block_size": 16,
                       "gpt_batch_size": 8}.items():
        at.number_input(key=key).set_value(value)
    at.number_input(key="gpt_steps").set_value(20_000)
    at.text_input(key="w_gpt_run_name").input("../page run").run()
    at.button(key="gpt_estimate").click().run()  # timed again
    said = " ".join(i.value for i in at.info)  # the figure, and what it assumed
    assert "ms per step" in said and "Measured on this CPU with" in said, said
    assert "1 layer × 32 wide, context 16, batch 8" in said and "other work" in said
    at.button(key="gpt_launch").click().run()
    assert not at.exception, [e.value for e in at.exception]
    [run] = list_runs(tmp_path)
    assert run.name == "page-run" and run.active and run.owner == ALICE

    poll(at, val_loss_shown)
    assert at.get("vega_lite_chart"), "the loss chart is drawn"
    # the estimate, for a further launch, names the run just launched as the attendee's own, and
    # says the step was timed before it
    said = " ".join(i.value for i in at.info)
    assert "1 other run (yours)" in said and "while no other run trained" in said, said
    at.button(key="gpt_stop").click().run()
    poll(at, lambda a: list_runs(tmp_path)[0].status == "stopped", timeout=30)
    assert not pid_alive(list_runs(tmp_path)[0].pid)

    # a fresh session (a page reload) still finds the run on disk
    again = open_page(tmp_path).run()
    assert "page-run" in again.selectbox(key="gpt_selected_run").options[0]
    again.text_input(key="gpt_prompt").input("the cat €").run()
    again.button(key="gpt_generate").click().run()
    assert not again.exception
    assert any("cannot be encoded" in e.value for e in again.error)
    again.text_input(key="gpt_prompt").input("the cat").run()
    again.button(key="gpt_generate").click().run()
    assert not again.exception and again.code and again.code[-1].value.startswith("the cat")
    written = again.code[-1].value
    again.slider(key="gpt_temperature").set_value(1.2).run()  # any rerun: a job's end, a slider
    assert again.code[-1].value == written  # the text stays until the next Generate


def custom(at, **sizes):
    at.selectbox(key="gpt_preset").select("custom").run()
    for key, value in sizes.items():
        at.number_input(key=f"gpt_{key}").set_value(value)
    return at.run()


def test_before_launch_the_page_says_what_a_run_costs_and_a_refusal_what_to_lower(app):
    """A model too big is refused naming what to lower and to what; lowered so, the page says
    unasked what the run will cost (time per step and in all, memory, where it queues), and a
    one-step run is "under a second", never "about 0 s for 1 steps"."""
    at = custom(app.run(), n_layer=1, n_head=2, n_embd=32, block_size=256, batch_size=64)
    refused = " ".join(e.value for e in at.error).replace("\\", "")  # as the Markdown reads
    assert "Lower batch_size to 16 (or block_size to 64)." in refused and "fewer steps" not in refused
    assert at.button(key="gpt_launch").disabled and not [i for i in at.info if "per step" in i.value]
    at = custom(at, batch_size=16)
    assert not at.error
    said = " ".join(i.value for i in at.info)
    assert "ms per step" in said and "MiB of memory" in said and "It starts at once" in said, said
    at.number_input(key="gpt_steps").set_value(1).run()
    said = " ".join(i.value for i in at.info)
    assert " for 1 step, " in said and "about 0 s" not in said, said


def test_a_number_past_its_bounds_is_named_and_launch_waits(app):
    """The boxes have no bounds of their own: a browser's number box refused 0 or -1 by itself,
    kept the last number it took and said nothing, and Launch then ran a model the boxes did not
    show.  Each number now reaches the page, which names what is wrong and holds Launch back."""
    def refused(at) -> str:
        assert at.button(key="gpt_launch").disabled
        return html.unescape(" ".join(e.value for e in at.error).replace("\\", ""))  # as a reader reads it

    at = custom(app.run(), n_layer=0)
    assert "n_layer must be a positive whole number, not 0" in refused(at)
    at = custom(at, n_layer=2)
    at.number_input(key="gpt_steps").set_value(-1).run()
    assert "max_steps must be a positive whole number, not -1" in refused(at)
    at.number_input(key="gpt_steps").set_value(10**9).run()
    assert "max_steps 1,000,000,000 (at most" in refused(at)
    at.number_input(key="gpt_steps").set_value(100).run()
    at.number_input(key="gpt_lr").set_value(0.0).run()
    assert "Need lr > 0" in refused(at)
    at.number_input(key="gpt_lr").set_value(1e-5).run()  # under the preset's min_lr: it decays from it
    assert not at.error and not at.button(key="gpt_launch").disabled


def test_a_corpus_of_many_scripts_is_refused_for_its_vocabulary_with_a_byte_level_way_out(app):
    """A character tokenizer has a token per distinct character: tens of thousands in a paste of
    the CJK, Yi and Hangul blocks, whose embeddings alone are over the CPU's bound.  The page says so before
    timing anything (the helper process ran out of memory and advised "a smaller model"), and one
    click trains BPE on bytes, which fits."""
    scripts = [*range(0x3400, 0xD7A4), *range(0x20000, 0x2A6E0)]  # CJK, Yi, Hangul: ~84,000 characters
    app.session_state["corpus_text"] = "".join(map(chr, scripts)) * 2
    at = app.run()
    refused = " ".join(e.value for e in at.error)
    assert "tokens of its tokenizer" in refused and "BPE on bytes" in refused, refused
    assert at.button(key="gpt_launch").disabled and not [i for i in at.info if "per step" in i.value]
    at.button(key="gpt_use_bytes_for_size").click().run()
    assert at.radio(key="gpt_tokenizer").value == "bpe" and not at.error, [e.value for e in at.error]
    assert not at.button(key="gpt_launch").disabled


def test_a_run_past_a_workshop_hour_is_warned_with_the_steps_that_fit():
    from core.room.probe import StepEstimate
    from ui.views.run_view import hour_advice

    est = StepEstimate(seconds=0.5, device="cpu", threads=1, steps=10)
    assert hour_advice(est, tiny_config(max_steps=7_000), others=0) is None  # 58 min
    warned = hour_advice(est, tiny_config(max_steps=20_000), others=0)
    assert "about 2 h 46 min: longer than a workshop hour. Lower Steps to 7,200" in warned
    shared = hour_advice(est, tiny_config(max_steps=7_000), others=1, gpt_workers=1)  # turns: twice
    assert "Lower Steps to 3,600" in shared


def test_a_gpu_estimate_names_the_gpu_it_was_measured_on(monkeypatch):
    from core.gpt.machine import Machine
    from core.room.probe import StepEstimate
    from ui.views import run_view

    monkeypatch.setattr(run_view, "this_machine", lambda: Machine(gpus=("NVIDIA H200",)))
    est = StepEstimate(seconds=0.008, device="cuda", threads=1, steps=100, start_s=9.0)
    said = run_view.estimate_text(est, tiny_config(max_steps=2000), 65, others=0)
    assert "≈ **8 ms per step**" in said and "Measured on cuda (NVIDIA H200)" in said, said


def test_the_estimate_says_which_of_the_runs_it_would_share_the_machine_with_are_yours():
    """Straight after Launch the run just launched trains: a further launch shares the machine with
    it, and it is the attendee's; the step was timed before it, with no run beside it."""
    from core.room.probe import StepEstimate
    from ui.views import run_view

    est = StepEstimate(seconds=0.05, device="cpu", threads=1, steps=10)
    config = tiny_config(max_steps=2000)
    said = run_view.estimate_text(est, config, 65, others=1, gpt_workers=2, yours=1)
    assert "while no other run trained" in said  # when it was measured
    assert "It starts at once on a free GPT worker, beside the 1 other run (yours)." in said
    said = run_view.estimate_text(est, config, 65, others=1, gpt_workers=1, yours=1, beside=2)
    assert "while 2 other runs trained" in said and "turns with the 1 other run (yours)" in said
    said = run_view.estimate_text(est, config, 65, others=3, gpt_workers=2, yours=1)
    assert "turns with the 3 other runs (1 of them yours) on this server's 2 GPT workers" in said
    assert "yours)" not in run_view.estimate_text(est, config, 65, others=2, gpt_workers=2)


def test_page_in_the_app_navigation(tmp_path, monkeypatch):
    monkeypatch.setenv("BPE_EXPLORER_RUNS_DIR", str(tmp_path))
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    at.switch_page("app_pages/train_gpt.py").run()
    assert not at.exception and at.title[0].value == "🧠 Train a GPT"
    assert list_runs(tmp_path) == []
    # the opening sample is too short to train on: the page opens on the English one, and says so
    assert at.session_state["corpus_name"] == PYTHON_DOCS
    assert TRAINING_CHOICE in [c.value for c in at.sidebar.caption]
    assert "corpus_back_to_opening" not in [b.key for b in at.sidebar.button]  # not where it is needed
    at.switch_page("app_pages/learn_bpe.py").run()  # said on every page while it is the corpus
    assert TRAINING_CHOICE in [c.value for c in at.sidebar.caption]
    # and, off Train a GPT, a way back to the example the pages opened on, as on a first visit
    at.sidebar.button(key="corpus_back_to_opening").click().run()
    assert at.session_state["corpus_name"] == samples.label(samples.DEFAULT_SAMPLE)
    assert TRAINING_CHOICE not in [c.value for c in at.sidebar.caption] and "corpus" not in at.query_params
    at.switch_page("app_pages/train_gpt.py").run()  # which Train a GPT replaces again
    assert at.session_state["corpus_name"] == PYTHON_DOCS and not at.warning


def test_a_too_short_corpus_offers_tiny_shakespeare(app, monkeypatch):
    shared_path("corpora", "tinyshakespeare.txt")  # where the button finds it offline
    app.session_state["corpus_text"] = "low lower newest widest"
    at = app.run()
    assert "too short" in at.warning[0].value and at.button(key="gpt_launch").disabled

    import ui.plumbing.corpus_sidebar

    def offline(cache_dir):
        raise CorpusError("Could not download Tiny Shakespeare (no internet connection?)")

    with monkeypatch.context() as m:  # offline and no local copy: a message, the corpus is kept
        m.setattr(ui.plumbing.corpus_sidebar, "download_tiny_shakespeare", offline)
        at.button(key="gpt_load_shakespeare").click().run()
    assert any("no internet" in e.value and "not changed" in e.value for e in at.error)
    assert at.session_state["corpus_text"] == "low lower newest widest"

    at.button(key="gpt_load_shakespeare").click().run()
    poll_until_done(at)  # a corpus this large trains its tokenizer in the room's job engine
    assert not at.exception and not at.warning
    assert at.session_state["corpus_name"] == "Tiny Shakespeare"
    assert len(at.session_state["corpus_text"]) == 1_115_394
    assert not at.button(key="gpt_launch").disabled

    samples = at.sidebar.selectbox(key="corpus_sample")
    assert samples.value is None  # Tiny Shakespeare is not a listed sample, so none is shown picked
    samples.select("sennrich").run()  # and the sample shown before is one pick away again
    assert at.session_state["corpus_text"] == (ROOT / "sample_corpora" / "sennrich.txt").read_text()
    assert "too short" in at.warning[0].value


def test_the_run_name_follows_the_settings_until_typed(app):
    at = app.run()
    assert at.text_input(key="w_gpt_run_name").value == "char-quick"  # a CPU's first preset
    at.radio(key="gpt_tokenizer").set_value("bpe").run()
    assert at.text_input(key="w_gpt_run_name").value == "bpe-quick"
    at.selectbox(key="gpt_preset").select("small").run()
    assert at.text_input(key="w_gpt_run_name").value == "bpe-small"
    at.text_input(key="w_gpt_run_name").input("my first run").run()
    at.radio(key="gpt_tokenizer").set_value("char").run()
    assert at.text_input(key="w_gpt_run_name").value == "my first run"


def test_new_runs_join_the_comparison_and_removed_ones_stay_out(app, tmp_path):
    finished_run(tmp_path, ALICE, "char-a", "2026-01-01T00:00:01", 3.1)
    finished_run(tmp_path, ALICE, "bpe-b", "2026-01-01T00:00:02", 2.9)
    at = app.run()
    assert at.multiselect(key="gpt_bpc_runs").value == ["bpe-b", "char-a"]
    finished_run(tmp_path, ALICE, "bpe-c", "2026-01-01T00:00:03", 2.7)  # e.g. launched from another tab
    at.run()
    assert at.multiselect(key="gpt_bpc_runs").value == ["bpe-b", "char-a", "bpe-c"]
    at.multiselect(key="gpt_bpc_runs").unselect("char-a").run()
    finished_run(tmp_path, ALICE, "char-d", "2026-01-01T00:00:04", 3.0)
    at.run()
    assert at.multiselect(key="gpt_bpc_runs").value == ["bpe-b", "bpe-c", "char-d"]
    spec = json.loads(at.get("vega_lite_chart")[-1].proto.spec)
    assert spec["encoding"]["y"]["field"] == "bits per character"


def test_the_run_watched_and_the_comparison_outlive_a_visit_to_another_page(app, tmp_path):
    finished_run(tmp_path, ALICE, "char-a", "2026-01-01T00:00:01", 3.1)
    finished_run(tmp_path, ALICE, "bpe-b", "2026-01-01T00:00:02", 2.9)
    at = app.run()
    at.selectbox(key="gpt_selected_run").set_value("char-a").run()
    at.multiselect(key="gpt_bpc_runs").unselect("char-a").run()
    at.switch_page("app_pages/learn_bpe.py").run()
    at.switch_page("app_pages/train_gpt.py").run()
    assert at.selectbox(key="gpt_selected_run").value == "char-a"  # not the newest again
    assert at.multiselect(key="gpt_bpc_runs").value == ["bpe-b"]
    assert not at.exception


def test_one_evaluation_draws_a_readable_comparison(app, tmp_path):
    """A run's first evaluation alone: its step on an axis from 0, its bits per character between
    ticks of two decimals (it was one tick, "4.053994", in the middle of an empty chart)."""
    finished_run(tmp_path, ALICE, "char-a", "2026-01-01T00:00:01", 4.053994)
    at = app.run()
    spec = json.loads(at.get("vega_lite_chart")[-1].proto.spec)
    x, y = spec["encoding"]["x"], spec["encoding"]["y"]
    low, high = y["scale"]["domain"]
    assert x["scale"]["domainMin"] == 0 and y["axis"]["format"] == ".2f"
    assert low < 4.053994 < high and high - low == pytest.approx(0.2)


@pytest.mark.slow
def test_resume_a_stopped_run_then_delete_it(app, tmp_path):
    run = launch_run(tiny_config(max_steps=20_000, eval_interval=10), "paused", tmp_path,
                     owner=ALICE, text=TEXT)
    poll(app, lambda a: (run.path / "ckpt.pt").is_file())
    stopped = stop_run(run.path, SERVER, timeout=30)
    at = app.run()
    assert not at.button(key="gpt_resume").disabled and not any(b.key == "gpt_stop" for b in at.button)
    at.button(key="gpt_resume").click().run()
    poll(at, lambda a: list_runs(tmp_path)[0].status == "running")
    [resumed] = list_runs(tmp_path)
    assert resumed.status == "running" and resumed.step >= stopped.step
    poll(at, lambda a: read_metrics(run.path))  # the resumed run has logged (or kept) a step
    steps_before = read_metrics(run.path)[-1]["step"]
    poll(at, lambda a: max((r["step"] for r in read_metrics(run.path)), default=-1) > steps_before + 10)
    at.button(key="gpt_stop").click().run()
    poll(at, lambda a: list_runs(tmp_path)[0].status == "stopped", timeout=30)
    assert not pid_alive(resumed.pid)

    at.button(key="gpt_delete").click().run()
    assert not at.exception and list_runs(tmp_path) == [] and not run.path.exists()
    assert "No runs yet" in " ".join(i.value for i in at.info)


def _stopped_run(runs_dir: Path, owner: str, name: str, seed: int = 1337) -> Path:
    """A run of ``owner``'s that trained a little and was stopped (so it can be resumed)."""
    run = launch_run(tiny_config(max_steps=20_000, eval_interval=10, seed=seed), name, runs_dir,
                     owner=owner, text=TEXT)
    deadline = time.monotonic() + 120
    while not (run.path / "ckpt.pt").is_file() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert (run.path / "ckpt.pt").is_file(), f"no checkpoint after 120 s: {list_runs(runs_dir)}"
    stop_run(run.path, SERVER, timeout=30)
    return run.path


def _labels(at) -> list[str]:
    box = [s for s in at.selectbox if s.key == "gpt_selected_run"]
    return list(box[0].options) if box else []


@pytest.mark.slow
def test_owners_see_their_own_runs_shared_ones_read_only_and_the_instructor_all(app, tmp_path,
                                                                               monkeypatch):
    monkeypatch.setenv("BPE_EXPLORER_INSTRUCTOR_KEY", KEY)
    private = _stopped_run(tmp_path, ALICE, "alices-run")
    alice = app.run()
    assert _labels(alice) == ["alices-run"] and alice.query_params["u"] == ALICE
    bob = open_page(tmp_path, BOB).run()
    assert "alices-run" not in " ".join(_labels(bob)) and "No runs yet" in " ".join(i.value for i in bob.info)

    alice.toggle(key=f"gpt_share_{ALICE}_alices-run").set_value(True).run()
    assert list_runs(tmp_path)[0].shared
    bob.run()
    [label] = _labels(bob)
    assert label.startswith("alices-run · attendee ") and ALICE not in label
    # another attendee's run is listed, never what Bob's page opens on: he picks it
    assert bob.selectbox(key="gpt_selected_run").value is None and "no runs yet" in bob.info[-1].value
    bob.selectbox(key="gpt_selected_run").select(label).run()
    assert not any(b.key in ("gpt_stop", "gpt_resume", "gpt_delete") for b in bob.button)
    assert "read-only" in " ".join(c.value for c in bob.caption)
    assert private.is_dir()

    teacher = open_page(tmp_path, "teacher-0123456789").run()
    assert _labels(teacher) == [] or "alices-run" in _labels(teacher)[0]  # shared: listed
    teacher.sidebar.text_input(key="instructor_key_input").input("wrong key").run()
    assert any("not the instructor key" in e.value for e in teacher.error)
    set_shared(private, SERVER, False)
    _stopped_run(tmp_path, BOB, "bobs-run", seed=2)
    teacher.sidebar.text_input(key="instructor_key_input").input(KEY).run()
    assert sorted(label.split(" · ")[0] for label in _labels(teacher)) == ["alices-run", "bobs-run"]
    teacher.selectbox(key="gpt_selected_run").select(_labels(teacher)[0]).run()
    assert not teacher.button(key="gpt_resume").disabled  # the instructor manages any run
    teacher.button(key="gpt_resume").click().run()
    poll(teacher, lambda a: any(b.key == "gpt_stop" for b in a.button), timeout=120)
    teacher.button(key="gpt_stop").click().run()
    assert not teacher.exception
    poll(teacher, lambda a: not any(r.active for r in list_runs(tmp_path)), timeout=60)


@pytest.mark.slow
def test_launching_eight_runs_queues_two_and_says_why_for_the_rest(app, tmp_path):
    """Eight different runs (their widths differ: the same run launched again trains once)."""
    at = app.run()
    at.selectbox(key="gpt_preset").select("custom").run()
    at.number_input(key="gpt_n_layer").set_value(1)
    at.number_input(key="gpt_steps").set_value(20_000).run()
    for k in range(8):
        at.number_input(key="gpt_n_embd").set_value(32 + 16 * k)
        at.button(key="gpt_launch").click().run()
    assert not at.exception
    assert len(list_runs(tmp_path)) == 2
    refusals = [e.value for e in at.error if "Not launched" in e.value]
    assert refusals and "already have 2 runs queued or training" in refusals[-1]


@pytest.mark.slow
def test_the_same_launch_by_another_attendee_trains_once_and_is_theirs_to_watch(app, tmp_path):
    """Alice and Bob launch the same corpus, tokenizer, settings and seed: one run trains; Bob's
    page lists it under his own name, labelled shared, read-only, and he can remove it from his
    runs while it trains on for Alice."""
    alice = app.run()
    alice.number_input(key="gpt_steps").set_value(20_000)
    alice.button(key="gpt_launch").click().run()
    bob = open_page(tmp_path, BOB).run()
    bob.number_input(key="gpt_steps").set_value(20_000)
    bob.button(key="gpt_launch").click().run()
    assert not bob.exception
    runs = list_runs(tmp_path)
    assert len({r.path for r in runs}) == 1 and len(runs) == 2  # one run, and Bob's join of it
    assert _labels(bob) == ["char-quick (shared)"]
    said = " ".join(c.value for c in bob.caption)
    assert "trains once for everyone who launched it; read-only" in said
    assert "trained once for the 2 attendees who launched it" in said
    assert not any(b.key in ("gpt_stop", "gpt_resume", "gpt_delete") for b in bob.button)
    bob.button(key="gpt_leave_shared").click().run()
    assert "No runs yet" in " ".join(i.value for i in bob.info)
    [left] = list_runs(tmp_path)
    assert left.owner == ALICE and left.active


def test_the_loss_curves_differ_in_colour_and_dashes_and_the_legend_says_which():
    """Train and validation were two blues of the theme, hard to tell apart; each now has its own
    colour and its own dashes, and one legend names both."""
    from ui.views.run_view import loss_chart

    metrics = [{"step": 10, "train_loss": 4.0}, {"step": 20, "train_loss": 3.5, "val_loss": 3.6}]
    encoding = loss_chart(metrics).to_dict()["encoding"]
    colours, dashes = encoding["color"]["scale"]["range"], encoding["strokeDash"]["scale"]["range"]
    assert len(set(colours)) == 2 and dashes[0] != dashes[1]
    assert encoding["color"]["legend"] is not None and "legend" not in encoding["strokeDash"]
